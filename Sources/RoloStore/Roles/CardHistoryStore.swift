import Foundation

/// Every version of every card (issue 31): what a client's bad sync can be undone from. A
/// role of its own, outside `RoloStore`'s union (as `FeedStore`), asked for with `as?`.
///
/// The back ends keep the versions where every write already passes: each change-log row a
/// write makes (PUT, MOVE, import, web edit, merge, restore, delete) records the card as it
/// now is, with the change's time, seq and author, in the same transaction (a trigger on
/// `changes`, so no write path can forget it and PostgreSQL makes no extra round trip). A
/// body is kept once per ETag, however many versions or books share it.
public protocol CardHistoryStore: Sendable {
    /// The versions of the card `name` still kept, oldest first; the last one is the card as
    /// it is now (or its deletion).
    func cardVersions(collectionID: Int64, name: String) async throws -> [CardVersion]
    /// For every card of the book changed after `date`: the versions after it, and the last
    /// version at or before it when one is kept (what the card was at `date`), oldest first.
    func bookVersions(collectionID: Int64, since date: Date) async throws -> [CardVersion]
    /// Drops versions older than `retention.days` except each card's last
    /// `retention.versions` and each card's newest version from before the cutoff (what the
    /// card was at the cutoff), and the bodies no version names any more. Records the cutoff
    /// (`historyCompleteSince`). Returns how many versions went.
    @discardableResult
    func pruneCardVersions(now: Date, retention: HistoryRetention) async throws -> Int
    /// The time from which every card's history is complete: the latest cutoff a pruning
    /// used (nil: never pruned). What a card was at any later time is kept, so an undo to
    /// such a time never takes a card whose older versions went for one created after it.
    func historyCompleteSince() async throws -> Date?
    /// Bytes the history holds (bodies and version rows), for the benchmark and `rolo check`.
    func historyBytes() async throws -> Int64
}

/// One version of a card: the card as one change left it.
public struct CardVersion: Sendable, Hashable {
    public var name: String
    /// The book's seq of the change that made this version.
    public var seq: Int64
    public var at: Date
    /// Nil for a deletion.
    public var etag: String?
    public var contentType: String?
    public var data: Data?
    /// Who made the change (nil for tools that set no author), and with which credential
    /// (0: the account password).
    public var user: String?
    public var credentialID: Int64?

    public var isDeletion: Bool { etag == nil }

    public init(name: String, seq: Int64, at: Date, etag: String?, contentType: String?, data: Data?,
                user: String?, credentialID: Int64?) {
        self.name = name; self.seq = seq; self.at = at; self.etag = etag; self.contentType = contentType
        self.data = data; self.user = user; self.credentialID = credentialID
    }
}

/// How long versions are kept: `history_days`, and whatever their age each card's last
/// `history_versions`.
public struct HistoryRetention: Sendable, Hashable {
    public var days: Int
    public var versions: Int
    public init(days: Int = 90, versions: Int = 10) { self.days = days; self.versions = versions }
    public static let `default` = HistoryRetention()

    /// Versions made before this may go (unless among a card's last `versions`).
    public func cutoff(now: Date) -> Date { now.addingTimeInterval(-Double(days) * 86_400) }
}
