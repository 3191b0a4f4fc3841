import Foundation
import RoloSQLite
import RoloStore
import Testing

/// `rolo push list` and `rolo push rotate-key` on a database, checked through the binary's
/// output and through the store reading the same file.
@Suite struct PushCommandTests {
    @Test func registrationsAreListedAndRotatingTheKeyDropsThemAll() async throws {
        let (folder, database) = try temporaryDatabase()
        defer { try? FileManager.default.removeItem(at: folder) }
        let db = ["--database", database]
        let add = try await RoloBinary.run(["user", "add", "alice", "--password-stdin", "--create-database"] + db, stdin: "pw-12345678\n")
        #expect(add.status == 0, "\(add.stderr)")
        let empty = try await RoloBinary.run(["push", "list", "alice"] + db)
        #expect(empty.status == 0 && empty.stdout.contains("alice has no push registrations."))

        let originalKey = Data(repeating: 5, count: 32)
        do {
            let store = try SQLiteStore(path: database, bcryptCost: 4)
            defer { try? store.close() }
            _ = try await store.pushKey { originalKey }
            let book = try #require(try await store.collection(owner: "alice", path: ["default"]))
            try await store.registerPush(PushRegistrationRequest(
                user: "alice", collectionID: book.id, credentialID: 0, pushResource: "https://ntfy.example.org/up/secret-device-id",
                publicKey: Data([4] + Array(repeating: 1, count: 64)), authSecret: Data(repeating: 2, count: 16),
                expires: Date().addingTimeInterval(86_400)), limit: 20)
        }
        let listed = try await RoloBinary.run(["push", "list", "alice"] + db)
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(listed.stdout.contains("default") && listed.stdout.contains("https://ntfy.example.org"))
        #expect(listed.stdout.contains("account password") && listed.stdout.contains("never"))
        // The device's part of the URL is not printed.
        #expect(!listed.stdout.contains("secret-device-id"))
        #expect((try await RoloBinary.run(["push", "list", "nobody"] + db)).status != 0)

        let rotated = try await RoloBinary.run(["push", "rotate-key"] + db)
        #expect(rotated.status == 0, "\(rotated.stderr)")
        let line = try #require(rotated.stdout.split(separator: "\n").first { $0.hasPrefix("New VAPID public key: ") })
        #expect(line.dropFirst("New VAPID public key: ".count).count == 87)
        let store = try SQLiteStore(path: database, bcryptCost: 4)
        defer { try? store.close() }
        #expect(try await store.pushRegistrations(user: "alice").isEmpty)
        #expect(try await store.pushKey { originalKey } != originalKey)
    }
}
