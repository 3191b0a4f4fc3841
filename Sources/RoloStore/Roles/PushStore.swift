import Foundation

/// WebDAV-Push: books' topics, the server's VAPID key, registrations and delivery outcomes,
/// and the feed of committed changes the notifier follows.
public protocol PushStore: Sendable {
    /// The time the store stamps on what it writes; push compares expiries and back-offs with it.
    var clock: StoreClock { get }
    /// Books whose content changed, published after each commit (`BookChangeFeed`).
    var bookChanges: BookChangeFeed { get }
    /// The book's push topic: random, stable across renames, never reused. `notFound`
    /// when there is no such book.
    func pushTopic(collectionID: Int64) async throws -> String
    /// The server's VAPID private key, made with `make` the first time it is asked for
    /// (by whichever process asks first).
    func pushKey(creatingWith make: @Sendable () -> Data) async throws -> Data
    /// Replaces the VAPID key and drops every registration: each was made for the old
    /// key, and clients register again when they see the new one.
    func rotatePushKey(to key: Data) async throws
    /// Registers, or renews the registration of the same user, book and push resource
    /// (same id, new keys and expiry). Throws `invalid` when the user already has `limit`
    /// other live registrations on the book.
    @discardableResult
    func registerPush(_ request: PushRegistrationRequest, limit: Int) async throws -> PushRegistration
    /// Deletes the user's registration; false when there is none, it is another user's,
    /// or it expired.
    func deletePushRegistration(id: String, user: String) async throws -> Bool
    /// The book's registrations that have not expired.
    func pushRegistrations(collectionID: Int64) async throws -> [PushRegistration]
    /// The user's registrations, expired ones included, for `rolo push list`.
    func pushRegistrations(user: String) async throws -> [PushRegistration]
    /// Notes how a delivery went; `.gone` deletes the registration.
    func recordPushOutcome(id: String, _ outcome: PushOutcome) async throws
    /// Deletes expired registrations; returns how many.
    @discardableResult
    func prunePushRegistrations() async throws -> Int
}
