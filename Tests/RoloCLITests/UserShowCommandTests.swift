import Foundation
import RoloSQLite
import RoloStore
import Testing

/// `rolo user show` and `rolo user list --long`: what the store keeps about accounts, through
/// the binary, checked against the store reading the same file.
@Suite struct UserShowCommandTests {
    private static func run(_ arguments: [String], _ db: [String], stdin: String? = nil,
                            sourceLocation: SourceLocation = #_sourceLocation) async throws -> String {
        let outcome: RoloBinary.Outcome
        if let stdin {
            outcome = try await RoloBinary.run(arguments + db, stdin: stdin)
        } else {
            outcome = try await RoloBinary.run(arguments + db)
        }
        #expect(outcome.status == 0, "\(arguments): \(outcome.stderr)", sourceLocation: sourceLocation)
        return outcome.stdout
    }

    private static func created(_ user: String, _ db: [String]) async throws -> String {
        let store = try SQLiteStore(path: db[1], bcryptCost: 4)
        defer { try? store.close() }
        let created = try #require(try await store.account(name: user)?.created)
        return CLIDateText.minute(Int64(created.timeIntervalSince1970))
    }

    @Test func showPrintsEverySettingBooksSharesAndAppPasswords() async throws {
        let (folder, database) = try temporaryDatabase()
        defer { try? FileManager.default.removeItem(at: folder) }
        let db = ["--database", database]
        for user in ["alice", "bob"] { _ = try await Self.run(["user", "add", user, "--password-stdin", "--create-database"], db, stdin: "pw-\(user)-1\n") }
        _ = try await Self.run(["book", "create", "alice", "family", "--display-name", "Family"], db)
        _ = try await Self.run(["share", "add", "alice", "family", "bob", "--accept"], db)
        _ = try await Self.run(["token", "add", "alice", "iPhone"], db)
        _ = try await Self.run(["token", "add", "alice", "Old"], db)
        _ = try await Self.run(["token", "revoke", "alice", "Old"], db)
        _ = try await Self.run(["user", "set", "alice", "--admin", "true", "--email", "alice@example.org"], db)

        let bare = try await Self.run(["user", "show", "bob"], db)
        #expect(bare == """
            user: bob
            source: local
            display name: -
            email: -
            admin: false
            disabled: false
            app passwords only: false
            created: \(try await Self.created("bob", db))
            last request: none recorded
            books: default "Contacts" (0 cards)
            shares given: none
            shares received: alice/family as family~alice (read-only, accepted)
            app passwords: 0 live, 0 revoked

            """)

        let hour = (Int64(Date().timeIntervalSince1970) / 3600 - 2) * 3600
        let store = try SQLiteStore(path: database, bcryptCost: 4)
        let iPhone = try #require(try await store.appPasswords(user: "alice").first { $0.name == "iPhone" }).id
        let family = try #require(try await store.collection(owner: "alice", path: ["family"])).id
        // bob's later request on alice's book is in alice's history, but it is not alice's request.
        try await store.recordAccess([AccessTally(user: "alice", credentialID: iPhone, bookID: 0, hour: hour, requests: 1),
                                      AccessTally(user: "bob", credentialID: 0, bookID: family, hour: hour + 3600, requests: 1)],
                                     uses: [CredentialUse(credentialID: iPhone, at: Date(timeIntervalSince1970: Double(hour) + 60),
                                                          address: "192.0.2.0", userAgent: "iOS/18")])
        try store.close()

        let full = try await Self.run(["user", "show", "alice"], db)
        #expect(full == """
            user: alice
            source: local
            display name: -
            email: alice@example.org
            admin: true
            disabled: false
            app passwords only: false
            created: \(try await Self.created("alice", db))
            last request: \(CLIDateText.minute(hour)) (the hour of the access history)
            books: default "Contacts" (0 cards), family "Family" (0 cards)
            shares given: family with bob (read-only, accepted)
            shares received: none
            app passwords: 1 live, 1 revoked, last used \(CLIDateText.minute(hour + 60))

            """)

        let missing = try await RoloBinary.run(["user", "show", "nobody"] + db)
        #expect(missing.status != 0 && missing.stderr.contains("No user nobody."), "\(missing.stderr)")
        #expect(missing.stdout.isEmpty)
    }

    @Test func listLongPrintsOneLinePerUserInFixedColumns() async throws {
        let (folder, database) = try temporaryDatabase()
        defer { try? FileManager.default.removeItem(at: folder) }
        let db = ["--database", database]
        for user in ["carol", "dan"] { _ = try await Self.run(["user", "add", user, "--password-stdin", "--create-database"], db, stdin: "pw-\(user)-1\n") }
        _ = try await Self.run(["user", "set", "dan", "--admin", "true", "--app-passwords-only", "true"], db)
        _ = try await Self.run(["book", "create", "dan", "work"], db)
        // Handed to the directory: the SOURCE column names it.
        #expect(try await Self.run(["user", "set", "dan", "--source", "ldap"], db).contains("source: ldap"))
        let unknown = try await RoloBinary.run(["user", "set", "dan", "--source", "nis"] + db)
        #expect(unknown.status != 0 && unknown.stderr.contains("--source must be local, ldap, proxy or oidc"), "\(unknown.stderr)")

        #expect(try await Self.run(["user", "list"], db) == "carol\tlocal\ndan\tldap\n")
        let long = try await Self.run(["user", "list", "--long"], db)
        #expect(long == """
            USER   ADMIN  DISABLED  APP-PASSWORDS-ONLY  BOOKS  CREATED            SOURCE
            carol  false  false     false                   1  \(try await Self.created("carol", db))  local
            dan    true   false     true                    2  \(try await Self.created("dan", db))  ldap

            """)
        #expect(try await Self.run(["user", "list", "-l"], db) == long)
    }
}
