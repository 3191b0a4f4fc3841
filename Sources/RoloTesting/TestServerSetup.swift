import Foundation
import RoloServer
import RoloSQLite
import RoloStore
import RoloTestControl

/// The store-side preparation shared by `rolo serve` (`--ephemeral`, `--fixtures`,
/// `--deterministic`) and `RoloTestServer`, so the binary and the in-process server start
/// from exactly the same state.
public enum TestServerSetup {
    /// bcrypt cost of throwaway stores. Cost 10 spends ~70 ms per hash, most of a test
    /// server's start; cost 4 spends ~1 ms. A store that dies with its process and is
    /// reachable only on loopback has no password file worth stealing, so slow hashing buys
    /// nothing there. Never use it for a persistent store: a leaked database would then give
    /// up its passwords to brute force a thousand times faster.
    public static let ephemeralBcryptCost: UInt8 = 4

    /// The clock a store gets: frozen at `StoreClock.deterministicEpoch` when deterministic.
    public static func clock(deterministic: Bool) -> StoreClock {
        deterministic ? .fixed() : .system
    }

    /// A store on a temporary file (removed by `close()`), cheap to hash passwords into.
    public static func ephemeralStore(deterministic: Bool) throws -> SQLiteStore {
        try SQLiteStore.temporary(bcryptCost: ephemeralBcryptCost, clock: clock(deterministic: deterministic))
    }

    /// Loads the fixture sets in order, then, when the store still has no user, creates
    /// `admin`, an administrator, with a random password. Returns the credentials a harness should use: the
    /// first fixture user, else the admin this call created, else nil (an existing store).
    public static func populate(_ store: any RoloStore, fixtures: [FixtureSet]) async throws -> Credentials? {
        let existing = Set(try await store.listUsers())
        for set in fixtures { _ = try await set.load(into: store) }
        if let login = fixtures.lazy.flatMap(\.logins).first {
            return Credentials(username: login.user, password: login.password, created: !existing.contains(login.user))
        }
        guard existing.isEmpty else { return nil }
        let password = randomPassword()
        try AccountRules.checkPassword(password)
        try await store.createUser(name: "admin", password: password)
        // The first user runs the server: it must reach the web UI's admin page.
        try await store.updateAccount(name: "admin", UserAccountUpdate(admin: true))
        return Credentials(username: "admin", password: password, created: true)
    }

    /// A random password of letters and digits (no look-alikes), for a generated `admin`.
    public static func randomPassword(length: Int = 20) -> String {
        let alphabet = Array("abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789")
        var generator = SystemRandomNumberGenerator()
        return String((0..<length).map { _ in alphabet.randomElement(using: &generator)! })
    }

    /// 32 random hex digits: the test-control API's bearer token.
    public static func randomToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<16).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
    }
}

/// A user a harness can log in as.
public struct Credentials: Sendable, Equatable {
    public var username: String
    public var password: String
    /// Whether this start created the user (its password is then known to be `password`).
    public var created: Bool

    public init(username: String, password: String, created: Bool) {
        self.username = username; self.password = password; self.created = created
    }
}
