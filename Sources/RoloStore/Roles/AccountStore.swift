import Foundation

/// Accounts and credentials: users and their passwords, account records, app passwords and
/// the access history each credential leaves. Name and password rules are the core's
/// (`AccountRules`); a back end stores what they let through.
public protocol AccountStore: Sendable {
    // MARK: Users
    /// Creates a user (bcrypt-hashed password) and its home with an address book `default`.
    func createUser(name: String, password: String) async throws
    func setPassword(user: String, password: String) async throws
    /// True when the user exists and the password matches its bcrypt hash.
    func verifyPassword(user: String, password: String) async throws -> Bool
    /// What a remembered account-password login rests on, asked on every request a cached
    /// login makes so that a change made by any process ends it on the next request: the
    /// password hash while the account password may open DAV (a new password has a new salt,
    /// and a user created again under the same name a new hash), nil when there is no such
    /// user, it is disabled, or it allows app passwords only. One indexed row; an embedded
    /// store answers without suspending, a network store with a round trip.
    func accountPasswordStamp(user: String) async throws -> String?
    /// Whether this store reads a request's `LookupAhead` with its sign-in (a network
    /// store, where that saves a round trip); the server binds one only then. False by
    /// default.
    var readsLookupsAhead: Bool { get }
    func listUsers() async throws -> [String]
    /// Deletes the user with every collection, resource and change row they own.
    func deleteUser(name: String) async throws

    // MARK: Accounts
    /// The user's account record; nil when there is no such user.
    func account(name: String) async throws -> UserAccount?
    func updateAccount(name: String, _ update: UserAccountUpdate) async throws
    /// Users whose name, display name or e-mail contains `text` (case-insensitively), for
    /// picking a sharee (`principal-property-search`); at most `limit`.
    func searchAccounts(matching text: String, limit: Int) async throws -> [UserAccount]

    // MARK: App passwords
    /// A new app password; `books` are names in the user's home (own books or mounts), nil
    /// for every book. Throws `invalid` when the name is taken or a book is unknown.
    func createAppPassword(user: String, name: String, readOnly: Bool, books: [String]?) async throws -> NewAppPassword
    func appPasswords(user: String) async throws -> [AppPassword]
    /// Revokes the user's live app password `name`; takes effect on its next request.
    func revokeAppPassword(user: String, name: String) async throws
    /// Checks a presented app password (`rolo_<id>_<secret>`) for `user`: nil when it is
    /// not one, or not theirs, or the secret is wrong. Revoked ones are reported so. Asked on
    /// every request a device makes with one, so that a revocation takes effect on the next:
    /// an embedded store answers without suspending (`SQLiteStore`'s is synchronous), a
    /// network store with a round trip.
    func checkAppPassword(user: String, secret: String) async throws -> AppPasswordCheck?

    // MARK: Access history
    /// Adds tallies to the hourly history and notes where app passwords were last used:
    /// one batched write for a minute of requests, never one per request.
    func recordAccess(_ tallies: [AccessTally], uses: [CredentialUse]) async throws
    /// The user's history since `date`: their own credentials on every book they reached,
    /// and, per sharee, what other users did on the user's books (without their devices).
    func accessHistory(user: String, since date: Date) async throws -> [AccessRecord]
    /// Rolls hourly rows older than the retention into daily rows and deletes daily rows
    /// past theirs, and the history of credentials revoked longer than the hourly retention.
    func pruneAccessHistory(now: Date, retention: AccessRetention) async throws
}

extension AccountStore {
    public var readsLookupsAhead: Bool { false }
}
