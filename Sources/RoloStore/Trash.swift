import Foundation

/// Why a card is in the trash.
public enum TrashReason: String, Sendable, Hashable {
    /// A person deleted it (the web UI's delete; DAV clients see a plain delete).
    case deleted
    /// A merge replaced this version of the surviving card with the merged one.
    case replaced
    /// A merge deleted it into another card.
    case merged
}

/// A card kept for 30 days after the web UI deleted or merged it away, or replaced it in a
/// merge, so that a person can put it back: the same name, UID and bytes. To a phone the
/// delete was a delete (a tombstone in the change log); a restore is a new add.
public struct TrashedCard: Sendable, Hashable {
    public var id: Int64
    public var collectionID: Int64
    public var name: String
    public var uid: String
    public var displayName: String
    public var reason: TrashReason
    /// The action it was part of: a merge's writes share one, and undo as one.
    public var batch: String
    /// The ETag the card had when trashed (of `data`).
    public var etag: String
    /// For `.replaced`: the ETag of the version that replaced it, so an undo overwrites only
    /// that version and never a later edit from a phone.
    public var replacedBy: String?
    public var trashed: Date
    /// Who did it.
    public var user: String?

    public init(id: Int64, collectionID: Int64, name: String, uid: String, displayName: String, reason: TrashReason,
                batch: String, etag: String, replacedBy: String?, trashed: Date, user: String?) {
        self.id = id; self.collectionID = collectionID; self.name = name; self.uid = uid
        self.displayName = displayName; self.reason = reason; self.batch = batch; self.etag = etag
        self.replacedBy = replacedBy; self.trashed = trashed; self.user = user
    }
}

/// One write of `RoloStore.applyCardBatch`: a web UI action (delete, restore, merge, undo,
/// a group edit over several member cards) is a list of these, done in one transaction,
/// all or none, each with its ETag precondition checked inside it.
public enum CardBatchWrite: Sendable, Hashable {
    /// Creates or replaces the card `name`. With `keepPrevious`, the version it replaces
    /// goes to the trash (`.replaced`) first.
    case put(name: String, data: Data, contentType: String, card: CardMetadata, precondition: WritePrecondition,
             keepPrevious: Bool)
    /// Deletes the card, keeping it in the trash for `reason` (`.deleted` or `.merged`).
    case trash(name: String, precondition: WritePrecondition, reason: TrashReason)
    /// Removes an entry from the trash (it was put back, or a person emptied it).
    case dropTrashed(id: Int64)
}

/// What a batch did.
public struct CardBatchResult: Sendable, Hashable {
    /// The id its trash entries share.
    public var batch: String
    /// The new ETag of each card put, by name.
    public var etags: [String: String]
    /// The trash entry each trashed or replaced card became, by name (an undo page can
    /// then point at the survivor of a merge).
    public var trashed: [String: Int64]
    /// The book's seq after the batch.
    public var seq: Int64
    public init(batch: String, etags: [String: String], trashed: [String: Int64] = [:], seq: Int64) {
        self.batch = batch; self.etags = etags; self.trashed = trashed; self.seq = seq
    }
}

/// A signed-in browser's session (the web UI). The store keeps sessions so that several
/// processes share them and a password change, disable or delete ends them at once; the
/// cookie holds a random token and the store only its hash.
public struct WebSession: Sendable, Hashable {
    public var user: String
    /// The token forms and `X-CSRF-Token` carry: per session, compared on every state change.
    public var csrfToken: String
    public var created: Date
    public var lastSeen: Date
    public init(user: String, csrfToken: String, created: Date, lastSeen: Date) {
        self.user = user; self.csrfToken = csrfToken; self.created = created; self.lastSeen = lastSeen
    }
}
