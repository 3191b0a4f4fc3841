import Foundation
import RoloSQLite
import RoloStore
import Testing

/// `rolo share`, `rolo token`, `rolo access` and `rolo user set` on a database, checked
/// through the binary's output and through the store reading the same file.
@Suite struct SharingCommandTests {
    /// A database with users alice and bob, and alice's second book `family`.
    private static func aliceAndBob() async throws -> (folder: URL, db: [String]) {
        let (folder, database) = try temporaryDatabase()
        let db = ["--database", database]
        for user in ["alice", "bob"] {
            let add = try await RoloBinary.run(["user", "add", user, "--password-stdin", "--create-database"] + db, stdin: "pw-\(user)-secret\n")
            #expect(add.status == 0, "\(add.stderr)")
        }
        let book = try await RoloBinary.run(["book", "create", "alice", "family", "--display-name", "Family"] + db)
        #expect(book.status == 0, "\(book.stderr)")
        return (folder, db)
    }

    /// The store on the same file, for checks the CLI's output cannot show.
    private static func withStore<T>(_ db: [String], _ body: (SQLiteStore) async throws -> T) async throws -> T {
        let store = try SQLiteStore(path: db[1], bcryptCost: 4)
        defer { try? store.close() }
        return try await body(store)
    }

    private static func expectFailure(_ arguments: [String], _ db: [String], stderrContains text: String,
                                      sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let outcome = try await RoloBinary.run(arguments + db)
        #expect(outcome.status != 0, "\(arguments) succeeded: \(outcome.stdout)", sourceLocation: sourceLocation)
        #expect(outcome.stderr.contains(text), "\(arguments): \(outcome.stderr)", sourceLocation: sourceLocation)
    }

    @Test func sharesAreAddedAcceptedListedAndRemovedAndBadRequestsChangeNothing() async throws {
        let (folder, db) = try await Self.aliceAndBob()
        defer { try? FileManager.default.removeItem(at: folder) }
        // While a server runs on the same database, as an admin would.
        let server = try ServeProcess(database: db[1])
        try await server.waitUntilListening()
        defer { if server.process.isRunning { server.process.send(SIGKILL) } }

        try await Self.expectFailure(["share", "add", "alice", "family", "alice"], db,
                                     stderrContains: "Cannot share alice/family with alice: a book cannot be shared with its own owner.")
        try await Self.expectFailure(["share", "add", "alice", "family", "nobody"], db, stderrContains: "No user nobody.")
        try await Self.expectFailure(["share", "add", "nobody", "family", "bob"], db, stderrContains: "No user nobody.")
        try await Self.expectFailure(["share", "add", "alice", "work", "bob"], db, stderrContains: "No address book alice/work.")
        try await Self.expectFailure(["share", "accept", "alice", "family", "bob"], db,
                                     stderrContains: "No share of alice/family with bob.")
        try await Self.expectFailure(["share", "remove", "alice", "family", "bob"], db,
                                     stderrContains: "No share of alice/family with bob.")
        #expect(try await RoloBinary.run(["share", "list", "alice"] + db).stdout == "alice has no shares.\n")
        #expect(try await Self.withStore(db) { try await $0.shares(of: "alice") }.isEmpty)

        let add = try await RoloBinary.run(["share", "add", "alice", "family", "bob"] + db)
        #expect(add.status == 0, "\(add.stderr)")
        #expect(add.stdout == "Shared alice/family with bob (read-only, pending: bob must accept it).\n")
        let pending = try await RoloBinary.run(["share", "list", "bob"] + db).stdout
        #expect(pending == """
            BOOK          SHAREE  ACCESS     STATE    MOUNT
            alice/family  bob     read-only  pending  family~alice

            """)
        #expect(try await Self.withStore(db) { try await $0.mounts(sharee: "bob") }.isEmpty)

        let accept = try await RoloBinary.run(["share", "accept", "alice", "family", "bob"] + db)
        #expect(accept.status == 0, "\(accept.stderr)")
        #expect(accept.stdout.contains("accepted: bob sees it as family~alice"))
        #expect(try await RoloBinary.run(["share", "list", "alice"] + db).stdout.contains("read-only  accepted  family~alice"))
        let mounts = try await Self.withStore(db) { try await $0.mounts(sharee: "bob") }
        #expect(mounts.map { $0.mount?.name } == ["family~alice"])
        #expect(mounts.first?.mount?.displayName == "Family (alice)")

        let upgrade = try await RoloBinary.run(["share", "add", "alice", "family", "bob", "--read-write"] + db)
        #expect(upgrade.stdout
            == "Updated the share of alice/family with bob (read-write, accepted: in bob's home as family~alice).\n")
        #expect(try await Self.withStore(db) { try await $0.shares(of: "bob") }.map(\.access) == [.readWrite])

        let remove = try await RoloBinary.run(["share", "remove", "alice", "family", "bob"] + db)
        #expect(remove.status == 0, "\(remove.stderr)")
        #expect(remove.stdout == "Removed the share of alice/family with bob.\n")
        #expect(try await RoloBinary.run(["share", "list", "bob"] + db).stdout == "bob has no shares.\n")
        #expect(try await Self.withStore(db) { try await $0.mounts(sharee: "bob") }.isEmpty)

        let accepted = try await RoloBinary.run(["share", "add", "alice", "default", "bob", "--accept"] + db)
        #expect(accepted.stdout == "Shared alice/default with bob (read-only, accepted: in bob's home as default~alice).\n")
        #expect(try await RoloBinary.run(["share", "list", "nobody"] + db).status != 0)
        #expect(await server.terminate() == 0)
    }

    @Test func acceptInTheOldOrderIsRefusedWithTheOrderToUseAndAcceptsNothing() async throws {
        let (folder, db) = try await Self.aliceAndBob()
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(try await RoloBinary.run(["share", "add", "alice", "family", "bob"] + db).status == 0)

        // SHAREE OWNER BOOK, the order before issue 29.
        try await Self.expectFailure(["share", "accept", "bob", "alice", "family"], db, stderrContains: """
            The order is OWNER BOOK SHAREE: bob has no book alice, but alice has a book family. \
            Did you mean `rolo share accept alice family bob`?
            """)
        #expect(try await Self.withStore(db) { try await $0.shares(of: "bob") }.map(\.state) == [.pending])
        #expect(try await Self.withStore(db) { try await $0.mounts(sharee: "bob") }.isEmpty)
        // Arguments that are not the old order get the usual messages.
        try await Self.expectFailure(["share", "accept", "bob", "family", "alice"], db, stderrContains: "No share of bob/family with alice.")
        try await Self.expectFailure(["share", "accept", "alice", "family", "nobody"], db, stderrContains: "No user nobody.")

        let accept = try await RoloBinary.run(["share", "accept", "alice", "family", "bob"] + db)
        #expect(accept.status == 0, "\(accept.stderr)")
        #expect(accept.stdout == "Share of alice/family with bob accepted: bob sees it as family~alice (read-only).\n")
        #expect(try await Self.withStore(db) { try await $0.mounts(sharee: "bob") }.map { $0.mount?.name } == ["family~alice"])
    }

    @Test func tokensPrintTheSecretLastAndCanBeListedAndRevoked() async throws {
        let (folder, db) = try await Self.aliceAndBob()
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(try await RoloBinary.run(["share", "add", "alice", "family", "bob", "--accept"] + db).status == 0)

        let add = try await RoloBinary.run(["token", "add", "alice", "iPhone"] + db)
        #expect(add.status == 0, "\(add.stderr)")
        #expect(add.stdout.hasSuffix("\n"))
        let lines = add.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        let secret = String(lines.last ?? "")
        #expect(secret.wholeMatch(of: /rolo_[0-9a-f]{8}_[0-9a-f]{40}/) != nil, "\(add.stdout)")
        #expect(lines.dropLast().allSatisfy { !$0.contains(secret) })
        #expect(add.stdout.contains("read-write, all books"))
        let check = try await Self.withStore(db) { try $0.checkAppPassword(user: "alice", secret: secret) }
        #expect(check?.revoked == false)
        #expect(check?.scope == .full)

        try await Self.expectFailure(["token", "add", "alice", "iPhone"], db,
                                     stderrContains: "already has an app password named iPhone")
        try await Self.expectFailure(["token", "add", "alice", "Tablet", "--book", "nosuch"], db,
                                     stderrContains: "Cannot create app password \"Tablet\": alice has no address book nosuch.")
        try await Self.expectFailure(["token", "add", "nobody", "Tablet"], db, stderrContains: "No user nobody.")
        #expect(try await Self.withStore(db) { try await $0.appPasswords(user: "alice") }.map(\.name) == ["iPhone"])

        let laptop = try await RoloBinary.run(["token", "add", "alice", "Laptop", "--read-only", "--book", "default"] + db)
        #expect(laptop.status == 0, "\(laptop.stderr)")
        #expect(laptop.stdout.contains("read-only: default"))
        let mac = try await RoloBinary.run(["token", "add", "bob", "Mac", "--book", "family~alice"] + db)
        #expect(mac.status == 0, "\(mac.stderr)")
        #expect(mac.stdout.contains("read-write: family~alice"))

        let list = try await RoloBinary.run(["token", "list", "alice"] + db)
        let rows = list.stdout.split(separator: "\n").map(String.init)
        #expect(rows.count == 3, "\(list.stdout)")
        #expect(rows.first?.hasPrefix("NAME    SCOPE") == true, "\(list.stdout)")
        #expect(rows.dropFirst().first?.hasPrefix("iPhone  read-write, all books") == true, "\(list.stdout)")
        #expect(rows.dropFirst().first?.contains("never") == true)
        #expect(rows.last?.hasPrefix("Laptop  read-only: default") == true, "\(list.stdout)")
        #expect(!list.stdout.contains("rolo_"))

        let revoke = try await RoloBinary.run(["token", "revoke", "alice", "iPhone"] + db)
        #expect(revoke.status == 0, "\(revoke.stderr)")
        #expect(try await Self.withStore(db) { try $0.checkAppPassword(user: "alice", secret: secret) }?.revoked == true)
        let afterRevoke = try await RoloBinary.run(["token", "list", "alice"] + db).stdout
        let iPhoneRow = afterRevoke.split(separator: "\n").first { $0.hasPrefix("iPhone") } ?? ""
        #expect(iPhoneRow.wholeMatch(of: /.* \d{4}-\d{2}-\d{2} \d{2}:\d{2}Z/) != nil, "\(afterRevoke)")
        try await Self.expectFailure(["token", "revoke", "alice", "iPhone"], db, stderrContains: "no live app password")
        try await Self.expectFailure(["token", "revoke", "alice", "Nope"], db, stderrContains: "no live app password")
        // A revoked name can be given again.
        #expect(try await RoloBinary.run(["token", "add", "alice", "iPhone"] + db).status == 0)
    }

    @Test func accessPrintsTheHistoryAsTablesAndAsJSON() async throws {
        let (folder, db) = try await Self.aliceAndBob()
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(try await RoloBinary.run(["share", "add", "alice", "family", "bob", "--accept"] + db).status == 0)
        #expect(try await RoloBinary.run(["token", "add", "alice", "iPhone"] + db).status == 0)
        let hour = (Int64(Date().timeIntervalSince1970) / 3600 - 2) * 3600
        try await Self.withStore(db) { store in
            let iPhone = try #require(try await store.appPasswords(user: "alice").first).id
            let aliceDefault = try #require(try await store.collection(owner: "alice", path: ["default"])).id
            let family = try #require(try await store.collection(owner: "alice", path: ["family"])).id
            try await store.recordAccess([
                AccessTally(user: "alice", credentialID: iPhone, bookID: aliceDefault, hour: hour, requests: 3,
                            cardsRead: 40, fullDownload: true),
                AccessTally(user: "alice", credentialID: 0, bookID: 0, hour: hour, requests: 2),
                AccessTally(user: "bob", credentialID: 0, bookID: family, hour: hour, requests: 5, cardsRead: 1,
                            cardsWritten: 2, cardsDeleted: 1),
            ], uses: [CredentialUse(credentialID: iPhone, at: Date(timeIntervalSince1970: Double(hour) + 60),
                                    address: "192.0.2.0", userAgent: "iOS/18")])
        }

        let json = try await RoloBinary.run(["access", "alice", "--json"] + db)
        #expect(json.status == 0, "\(json.stderr)")
        let objects = try #require(try JSONSerialization.jsonObject(with: json.output) as? [[String: Any]])
        #expect(objects.count == 3, "\(json.stdout)")
        let keys: Set<String> = ["period", "start", "user", "credential", "book_owner", "book", "requests", "cards_read",
                                 "cards_written", "cards_deleted", "full_download"]
        #expect(objects.allSatisfy { Set($0.keys) == keys }, "\(json.stdout)")
        let start = Date(timeIntervalSince1970: Double(hour)).formatted(.iso8601)
        #expect(objects.allSatisfy { $0["period"] as? String == "hour" && $0["start"] as? String == start })
        let phone = try #require(objects.first { $0["credential"] as? String == "iPhone" })
        #expect(phone["book_owner"] as? String == "alice" && phone["book"] as? String == "default")
        #expect(phone["requests"] as? Int == 3 && phone["cards_read"] as? Int == 40)
        #expect(phone["full_download"] as? Bool == true)
        let discovery = try #require(objects.first { $0["credential"] as? String == "account password" })
        #expect(discovery["book"] is NSNull && discovery["book_owner"] is NSNull)
        #expect(discovery["full_download"] as? Bool == false)
        let sharee = try #require(objects.first { $0["user"] as? String == "bob" })
        #expect(sharee["credential"] is NSNull)
        #expect(sharee["book"] as? String == "family" && sharee["cards_written"] as? Int == 2)

        let table = try await RoloBinary.run(["access", "alice"] + db)
        #expect(table.status == 0, "\(table.stderr)")
        let tableLines = table.stdout.split(separator: "\n").map(String.init)
        #expect(tableLines.first == "\(CLIDateText.minute(hour)) (hour)", "\(table.stdout)")
        #expect(tableLines.contains { $0.contains("alice  iPhone") && $0.contains("alice/default")
                && $0.hasSuffix("FULL DOWNLOAD") }, "\(table.stdout)")
        #expect(tableLines.contains { $0.contains("account password") && $0.contains("(home)") })
        #expect(tableLines.contains { $0.contains("bob") && $0.contains("alice/family") && !$0.contains("FULL") })
        let bobsView = try await RoloBinary.run(["access", "bob"] + db).stdout
        #expect(bobsView.contains("  bob   account password  alice/family"), "\(bobsView)")

        // Later than the history: nothing. A bad date or an unknown user: an error.
        let later = try await RoloBinary.run(["access", "alice", "--json", "--since",
                                              Date(timeIntervalSince1970: Double(hour + 3600)).formatted(.iso8601)] + db)
        #expect(later.stdout == "[]\n", "\(later.stdout)")
        let day = Date(timeIntervalSince1970: Double(hour)).formatted(.iso8601.year().month().day())
        #expect(try await RoloBinary.run(["access", "alice", "--json", "--since", day] + db).stdout.contains("iPhone"))
        try await Self.expectFailure(["access", "alice", "--since", "yesterday"], db, stderrContains: "Invalid --since")
        try await Self.expectFailure(["access", "nobody"], db, stderrContains: "No user nobody.")
    }

    @Test func userSetChangesAccountSettings() async throws {
        let (folder, db) = try await Self.aliceAndBob()
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(try await RoloBinary.run(["user", "set", "alice"] + db).status != 0)
        #expect(try await RoloBinary.run(["user", "set", "alice", "--admin", "maybe"] + db).status != 0)
        try await Self.expectFailure(["user", "set", "nobody", "--admin", "true"], db, stderrContains: "No user nobody.")

        let on = try await RoloBinary.run(["user", "set", "alice", "--app-passwords-only", "true"] + db)
        #expect(on.status == 0, "\(on.stderr)")
        #expect(on.stdout.contains("app passwords only: true"))
        var account = try #require(try await Self.withStore(db) { try await $0.account(name: "alice") })
        #expect(account.appPasswordsOnly && !account.admin && account.displayName == nil)

        let more = try await RoloBinary.run(["user", "set", "alice", "--app-passwords-only", "false", "--admin", "true",
                                             "--display-name", "Alice Liddell", "--email", "alice@example.org"] + db)
        #expect(more.status == 0, "\(more.stderr)")
        account = try #require(try await Self.withStore(db) { try await $0.account(name: "alice") })
        #expect(!account.appPasswordsOnly && account.admin)
        #expect(account.displayName == "Alice Liddell" && account.email == "alice@example.org")

        #expect(try await RoloBinary.run(["user", "set", "alice", "--display-name", "", "--admin", "false"] + db).status == 0)
        account = try #require(try await Self.withStore(db) { try await $0.account(name: "alice") })
        #expect(account.displayName == nil && account.email == "alice@example.org" && !account.admin)
        #expect(try await Self.withStore(db) { try await $0.account(name: "bob") }?.admin == false)
    }
}

/// The CLI's minute format, recomputed here so the test does not depend on the binary's code.
enum CLIDateText {
    static func minute(_ hour: Int64) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute],
                                            from: Date(timeIntervalSince1970: Double(hour)))
        return String(format: "%04d-%02d-%02d %02d:%02dZ", parts.year!, parts.month!, parts.day!, parts.hour!, parts.minute!)
    }
}
