import Foundation

// Shares, app passwords and the access history: the records behind Rolo's access model.
// The store keeps them; the DAV engine decides from them (`Access` in the DAV target).

/// What a share lets its sharee do with the owner's book.
public enum ShareAccess: String, Sendable, Codable, CaseIterable {
    case readOnly = "read"
    case readWrite = "read-write"
}

/// A share waits for its sharee before it appears over DAV: a phone syncs every book in
/// its home, so a share that appeared unasked would reach every app with Contacts access.
public enum ShareState: String, Sendable, Codable {
    case pending
    case accepted
}

/// One book shared with one user.
public struct Share: Sendable, Hashable {
    public var id: Int64
    public var owner: String
    /// The shared book's path below the owner's home (one component).
    public var book: String
    public var bookID: Int64
    /// The book's display name as the owner set it.
    public var bookDisplayName: String?
    public var sharee: String
    public var access: ShareAccess
    public var state: ShareState
    /// The mount's name in the sharee's home: `<book>~<owner>`, never a name a user can
    /// give a collection (`~` is refused there), so it cannot collide with the sharee's books.
    public var mountName: String
    /// The sharee's own name for the mount, when they renamed it.
    public var mountDisplayName: String?
    public var created: Date

    public init(id: Int64, owner: String, book: String, bookID: Int64, bookDisplayName: String?, sharee: String,
                access: ShareAccess, state: ShareState, mountName: String, mountDisplayName: String?, created: Date) {
        self.id = id; self.owner = owner; self.book = book; self.bookID = bookID; self.bookDisplayName = bookDisplayName
        self.sharee = sharee; self.access = access; self.state = state; self.mountName = mountName
        self.mountDisplayName = mountDisplayName; self.created = created
    }

    /// The name a mount of `book` owned by `owner` gets in a sharee's home.
    public static func mountName(book: String, owner: String) -> String { "\(book)~\(owner)" }
}

/// How a user reaches a book someone else owns: the accepted share, mounted in their home.
/// A `CollectionInfo` seen through a mount carries it; its `owner` and `path` stay the owner's.
public struct Mount: Sendable, Hashable {
    public var shareID: Int64
    public var sharee: String
    /// The mount's single path component in the sharee's home.
    public var name: String
    public var access: ShareAccess
    /// "<book> (<owner>)", or the sharee's own name for it.
    public var displayName: String

    public init(shareID: Int64, sharee: String, name: String, access: ShareAccess, displayName: String) {
        self.shareID = shareID; self.sharee = sharee; self.name = name; self.access = access; self.displayName = displayName
    }
}

/// A user's account record beyond the password.
public struct UserAccount: Sendable, Hashable {
    public var name: String
    public var displayName: String?
    public var email: String?
    /// The account password no longer opens DAV; only app passwords do.
    public var appPasswordsOnly: Bool
    public var admin: Bool
    /// An admin turned the account off: no password, app password or session opens it,
    /// and its shares stay as they are.
    public var disabled: Bool
    /// Moves whenever the set of collections in the user's home changes (own books created
    /// or deleted, mounts added, removed or renamed): the home's ctag, so clients list again.
    public var homeSeq: Int64
    /// When the user was created (`rolo user show`); nil from a store that does not keep it.
    public var created: Date?
    /// Where the user comes from (`auth_sources`): `local` (made by an admin, or before
    /// sources were recorded), or the source whose first login made them (`ldap`, `proxy`).
    /// Only `local` users sign in with the account password.
    public var source: String

    public init(name: String, displayName: String?, email: String?, appPasswordsOnly: Bool, admin: Bool,
                disabled: Bool = false, homeSeq: Int64, created: Date? = nil, source: String = "local") {
        self.name = name; self.displayName = displayName; self.email = email
        self.appPasswordsOnly = appPasswordsOnly; self.admin = admin; self.disabled = disabled; self.homeSeq = homeSeq
        self.created = created; self.source = source
    }
}

/// A change to a user's account record; nil fields stay as they are.
public struct UserAccountUpdate: Sendable, Hashable {
    public var displayName: String??
    public var email: String??
    public var appPasswordsOnly: Bool?
    public var admin: Bool?
    /// Disabling also ends the user's web sessions.
    public var disabled: Bool?
    /// `UserAccount.source`: set by the first login through a source.
    public var source: String?
    public init(displayName: String?? = nil, email: String?? = nil, appPasswordsOnly: Bool? = nil, admin: Bool? = nil,
                disabled: Bool? = nil, source: String? = nil) {
        self.displayName = displayName; self.email = email; self.appPasswordsOnly = appPasswordsOnly; self.admin = admin
        self.disabled = disabled; self.source = source
    }
}

/// What an app password may reach: everything its user may, or less.
public struct CredentialScope: Sendable, Hashable {
    public var readOnly: Bool
    /// Nil: every book the user has, books made later included. Otherwise these book ids
    /// (own books or shared ones) and nothing else.
    public var books: Set<Int64>?

    public init(readOnly: Bool, books: Set<Int64>?) { self.readOnly = readOnly; self.books = books }

    /// The account password's scope.
    public static let full = CredentialScope(readOnly: false, books: nil)

    public var isFull: Bool { !readOnly && books == nil }

    public func includes(book id: Int64) -> Bool { books?.contains(id) ?? true }
}

/// An app password as listed to its user (never its secret).
public struct AppPassword: Sendable, Hashable {
    public var id: Int64
    public var user: String
    public var name: String
    public var scope: CredentialScope
    /// Paths of the scoped books as the user reaches them (`default`, `family~alice`).
    public var bookNames: [String]
    public var created: Date
    public var lastUsed: Date?
    /// The client's address, truncated (IPv4 /24, IPv6 /48) when it was stored.
    public var lastAddress: String?
    public var lastUserAgent: String?
    public var revoked: Date?

    public init(id: Int64, user: String, name: String, scope: CredentialScope, bookNames: [String], created: Date,
                lastUsed: Date?, lastAddress: String?, lastUserAgent: String?, revoked: Date?) {
        self.id = id; self.user = user; self.name = name; self.scope = scope; self.bookNames = bookNames
        self.created = created; self.lastUsed = lastUsed; self.lastAddress = lastAddress
        self.lastUserAgent = lastUserAgent; self.revoked = revoked
    }
}

/// The outcome of `createAppPassword`: the record and the secret, shown once.
public struct NewAppPassword: Sendable {
    public var appPassword: AppPassword
    /// `rolo_<id>_<secret>`: what the device sends as its password.
    public var secret: String

    package init(appPassword: AppPassword, secret: String) {
        self.appPassword = appPassword; self.secret = secret
    }
}

/// What the store knows of a presented app password, for the authenticator.
public struct AppPasswordCheck: Sendable, Hashable {
    public var id: Int64
    public var user: String
    public var scope: CredentialScope
    public var revoked: Bool

    package init(id: Int64, user: String, scope: CredentialScope, revoked: Bool) {
        self.id = id; self.user = user; self.scope = scope; self.revoked = revoked
    }
}

/// Requests and cards served for one credential on one book in one hour: what the access
/// history adds up. Never which cards.
public struct AccessTally: Sendable, Hashable {
    public var user: String
    /// The app password's id; 0 for the account password.
    public var credentialID: Int64
    /// The book; 0 for requests that touched no book (discovery of the home or principal).
    public var bookID: Int64
    /// The hour's start, seconds since 1970.
    public var hour: Int64
    public var requests: Int
    public var cardsRead: Int
    public var cardsWritten: Int
    public var cardsDeleted: Int
    /// An answer of this hour carried the whole book (an initial sync, an export).
    public var fullDownload: Bool

    public init(user: String, credentialID: Int64, bookID: Int64, hour: Int64, requests: Int = 0, cardsRead: Int = 0,
                cardsWritten: Int = 0, cardsDeleted: Int = 0, fullDownload: Bool = false) {
        self.user = user; self.credentialID = credentialID; self.bookID = bookID; self.hour = hour
        self.requests = requests; self.cardsRead = cardsRead; self.cardsWritten = cardsWritten
        self.cardsDeleted = cardsDeleted; self.fullDownload = fullDownload
    }
}

/// Where and how an app password was last used, folded into the history's batched write.
public struct CredentialUse: Sendable, Hashable {
    public var credentialID: Int64
    public var at: Date
    /// Already truncated.
    public var address: String
    public var userAgent: String?
    public init(credentialID: Int64, at: Date, address: String, userAgent: String?) {
        self.credentialID = credentialID; self.at = at; self.address = address; self.userAgent = userAgent
    }
}

/// One row of the history as read back.
public struct AccessRecord: Sendable, Hashable {
    public enum Period: String, Sendable { case hour, day }
    public var period: Period
    public var start: Date
    /// The user whose credential made the requests.
    public var user: String
    /// The app password's name; nil for the account password (or for a sharee's
    /// credentials, which the book's owner does not see).
    public var credential: String?
    public var credentialID: Int64?
    /// Owner and path of the book ("alice", "family"); nil for requests that touched no book.
    public var bookOwner: String?
    public var book: String?
    public var requests: Int
    public var cardsRead: Int
    public var cardsWritten: Int
    public var cardsDeleted: Int
    public var fullDownload: Bool

    public init(period: Period, start: Date, user: String, credential: String?, credentialID: Int64?, bookOwner: String?,
                book: String?, requests: Int, cardsRead: Int, cardsWritten: Int, cardsDeleted: Int, fullDownload: Bool) {
        self.period = period; self.start = start; self.user = user; self.credential = credential
        self.credentialID = credentialID; self.bookOwner = bookOwner; self.book = book; self.requests = requests
        self.cardsRead = cardsRead; self.cardsWritten = cardsWritten; self.cardsDeleted = cardsDeleted
        self.fullDownload = fullDownload
    }
}

/// How long the history is kept.
public struct AccessRetention: Sendable, Hashable {
    public var hourly: TimeInterval
    public var daily: TimeInterval
    public init(hourly: TimeInterval = 30 * 86_400, daily: TimeInterval = 396 * 86_400) {
        self.hourly = hourly; self.daily = daily
    }
    public static let `default` = AccessRetention()
}

/// Who makes the writes of the current task: recorded with each change-log row, so the
/// owner of a shared book can see which user and which device changed a card. A task
/// local rather than one more argument of every write operation: attribution belongs to
/// the request, the way a logger's metadata does, and bulk tools that set none record none.
public struct ChangeAuthor: Sendable, Hashable {
    public var user: String
    /// The app password's id; 0 for the account password.
    public var credentialID: Int64
    public init(user: String, credentialID: Int64) { self.user = user; self.credentialID = credentialID }

    @TaskLocal public static var current: ChangeAuthor?
}

/// A change-log row with its author, for the owner's view of who changed what.
public struct AttributedChange: Sendable, Hashable {
    public var name: String
    public var deleted: Bool
    public var seq: Int64
    public var at: Date
    public var user: String?
    public var credential: String?
    public init(name: String, deleted: Bool, seq: Int64, at: Date, user: String?, credential: String?) {
        self.name = name; self.deleted = deleted; self.seq = seq; self.at = at; self.user = user; self.credential = credential
    }
}
