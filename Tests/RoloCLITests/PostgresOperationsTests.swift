import Foundation
#if canImport(Glibc)
import Glibc
#endif
import LoopbackSockets
import PostgresTestSupport
import Synchronization
import Testing

/// What an operator of a PostgreSQL-backed Rolo watches and keeps (issue 34): the database's
/// size in `/metrics`, and `rolo backup` of a `postgresql://` URL read back by `rolo migrate`
/// into either back end, with the built binary and a real server.
@Suite struct PostgresOperationsTests {
    static let auth = ["-u", "olga:olga-password"]
    static let syncBody = """
        <?xml version="1.0" encoding="utf-8"?>
        <d:sync-collection xmlns:d="DAV:"><d:sync-token/><d:sync-level>1</d:sync-level>\
        <d:prop><d:getetag/></d:prop></d:sync-collection>
        """

    static func card(_ uid: String, _ fn: String) -> String {
        "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:\(uid)\r\nFN:\(fn)\r\nEND:VCARD\r\n"
    }

    static func book(_ port: Int) -> String { "http://127.0.0.1:\(port)/dav/addressbooks/olga/default/" }

    /// A new database with the user olga (`auth`'s password).
    static func databaseWithOlga() async throws -> TestDatabase {
        let database = try await TestDatabase.create()
        let add = try await RoloBinary.run(["user", "add", "olga", "--password-stdin", "--database", database.url],
                                           stdin: "olga-password\n")
        #expect(add.status == 0, "\(add.stderr)")
        return database
    }

    @Test func metricsReportTheSizeOfThePostgreSQLDatabase() async throws {
        let database = try await Self.databaseWithOlga()
        defer { Task { await database.drop() } }
        let serve = try ServeProcess(database: database.url)
        let port = try await serve.waitUntilListening()
        #expect(try await curlStatus(Self.auth + ["-X", "PUT", "-H", "Content-Type: text/vcard", "--data-binary",
                                                  Self.card("m-1", "Metric Card"), Self.book(port) + "m-1.vcf"]) == 201)
        let text = try await curl(["http://127.0.0.1:\(port)/metrics"])
        let size = text.split(separator: "\n").first { $0.hasPrefix("rolo_database_size_bytes ") }
            .flatMap { Double($0.split(separator: " ")[1]) }
        // An empty PostgreSQL database alone takes several MB: a size that small is no accident.
        #expect((size ?? 0) > 1_000_000, "\(text)")
        #expect(text.contains("rolo_cards 1"), "\(text)")
        #expect(await serve.terminate() == 0)
    }

    /// `rolo import` writes in batches of 500, each below the store's threshold for a bulk
    /// write; the import as a whole (`CardStore.importFinished`) leaves the book's table
    /// vacuumed and analysed, so its listings read the covering index alone at once
    /// (`v10-listing-covering-index`) instead of after autovacuum's turn.
    @Test func anImportInBatchesLeavesTheBooksTableVacuumedAndAnalysed() async throws {
        let database = try await Self.databaseWithOlga()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rolo-pg-import-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer {
            try? FileManager.default.removeItem(at: folder)
            Task { await database.drop() }
        }
        let file = folder.appendingPathComponent("cards.vcf").path
        try (0..<1200).map { Self.card("i-\($0)", "Imported \($0)") }.joined().write(toFile: file, atomically: true, encoding: .utf8)
        let imported = try await RoloBinary.run(["import", "olga", "default", file, "--database", database.url])
        #expect(imported.status == 0 && imported.stdout.contains("1200 new"), "\(imported.stdout) \(imported.stderr)")
        // Vacuumed and analysed by the import itself: autovacuum's passes are counted apart
        // (`last_autovacuum`). Whether VACUUM can mark every page all-visible depends on the
        // other transactions running in the cluster meanwhile, so that is not asserted.
        let stats = try await RoloBinary.run(executable: "/usr/bin/psql", [
            "-X", "-q", "-A", "-t", database.url, "-c",
            "SELECT last_vacuum IS NOT NULL, last_analyze IS NOT NULL FROM pg_stat_user_tables WHERE relname = 'resources'",
        ])
        #expect(stats.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "t|t",
                "last_vacuum|last_analyze set: \(stats.stdout) \(stats.stderr)")
    }

    /// A backup of a PostgreSQL database taken while the server runs, restored by `rolo
    /// migrate` into a fresh SQLite file and into a fresh PostgreSQL database: each serves
    /// the same cards with the same ETags and the same sync token, and an old client's token
    /// goes on syncing.
    @Test func aBackupOfPostgreSQLRestoresIntoEitherBackEndWithEveryETagAndSyncToken() async throws {
        let source = try await TestDatabase.create()
        let restored = try await TestDatabase.create()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rolo-pg-backup-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer {
            try? FileManager.default.removeItem(at: folder)
            Task { await source.drop(); await restored.drop() }
        }
        let add = try await RoloBinary.run(["user", "add", "olga", "--password-stdin", "--database", source.url],
                                           stdin: "olga-password\n")
        #expect(add.status == 0, "\(add.stderr)")
        let serve = try ServeProcess(database: source.url)
        let port = try await serve.waitUntilListening()
        let put = Self.auth + ["-X", "PUT", "-H", "Content-Type: text/vcard", "--data-binary"]
        for index in 1...5 {
            #expect(try await curlStatus(put + [Self.card("b-\(index)", "Backup \(index)"), Self.book(port) + "b-\(index).vcf"]) == 201)
        }
        #expect(try await curlStatus(put + [Self.card("b-2", "Backup Two"), Self.book(port) + "b-2.vcf"]) == 204)
        #expect(try await curlStatus(Self.auth + ["-X", "DELETE", Self.book(port) + "b-4.vcf"]) == 204)
        let original = try await Self.state(port: port)
        #expect(original.etags.count == 4 && original.token != nil, "\(original)")

        let copy = folder.appendingPathComponent("backup.sqlite").path
        let backup = try await RoloBinary.run(["backup", copy, "--database", source.url])
        #expect(backup.status == 0, "\(backup.stdout) \(backup.stderr)")
        #expect(backup.stdout.contains("1 users, 1 collections, 4 cards and files"), "\(backup.stdout)")
        #expect(backup.stderr.contains("4/4"), "progress on stderr: \(backup.stderr)")
        #expect(await serve.terminate() == 0)

        let intoSQLite = folder.appendingPathComponent("restored.sqlite").path
        let toSQLite = try await RoloBinary.run(["migrate", "--from", copy, "--to", intoSQLite])
        #expect(toSQLite.status == 0, "\(toSQLite.stderr)")
        let toPostgres = try await RoloBinary.run(["migrate", "--from", copy, "--to", restored.url])
        #expect(toPostgres.status == 0, "\(toPostgres.stderr)")
        let exported = try await RoloBinary.run(["export", "olga", "default", "--database", source.url])
        for target in [intoSQLite, restored.url] {
            let again = try ServeProcess(database: target)
            let state = try await Self.state(port: try await again.waitUntilListening())
            #expect(state == original, "\(target)")
            #expect(await again.terminate() == 0)
            let export = try await RoloBinary.run(["export", "olga", "default", "--database", target])
            #expect(export.status == 0 && export.stdout == exported.stdout, "\(target): \(export.stderr)")
        }
    }

    /// Every pooled connection held by a slow statement (a trigger on `resources` that sleeps
    /// 30 s in `pg_sleep`, as a stuck function or a slow disk would): each PUT, more of them
    /// than the pool has connections, is answered 503 with Retry-After within the statement
    /// and connection timeouts, not after the sleep; once the trigger is gone the same server
    /// writes again, without a restart (issue 34).
    @Test func aPoolHeldBySleepingStatementsGives503AndRecovers() async throws {
        let database = try await Self.databaseWithOlga()
        defer { Task { await database.drop() } }
        let serve = try ServeProcess(database: database.url, extra: [
            "--database-pool-size", "2", "--database-connection-timeout", "2", "--database-statement-timeout", "3"])
        let port = try await serve.waitUntilListening()
        let put = Self.auth + ["-X", "PUT", "-H", "Content-Type: text/vcard", "--data-binary"]
        // The first write also makes the home; a loaded machine may need a retry for it.
        var ready = 0
        let readyBy = ContinuousClock.now + .seconds(30)
        while ready != 201, ContinuousClock.now < readyBy {
            ready = try await curlStatus(put + [Self.card("s-0", "Sleep 0"), Self.book(port) + "s-0.vcf"])
            if ready != 201 { try await Task.sleep(for: .milliseconds(300)) }
        }
        #expect(ready == 201)

        let url = database.url
        _ = try await TestPostgres.onThread { RestoreInterruptionTests.psql(url, """
            CREATE FUNCTION rolo_test_sleep() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(30); RETURN NEW; END $$;
            CREATE TRIGGER rolo_test_sleep BEFORE INSERT ON resources FOR EACH ROW EXECUTE FUNCTION rolo_test_sleep();
            """) }
        let installed = try await TestPostgres.onThread {
            RestoreInterruptionTests.psql(url, "SELECT count(*) FROM pg_trigger WHERE tgname = 'rolo_test_sleep'")
        }
        #expect(installed == "1\n", "the sleeping trigger is in place")

        let sent = ContinuousClock.now
        let answers = try await withThrowingTaskGroup(of: String.self) { group in
            for index in 1...4 {
                group.addTask {
                    try await curl(["-i"] + put + [Self.card("s-\(index)", "Sleep \(index)"), Self.book(port) + "s-\(index).vcf"])
                }
            }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        let waited = ContinuousClock.now - sent
        for answer in answers {
            #expect(answer.hasPrefix("HTTP/1.1 503"), "\(answer)")
            #expect(answer.lowercased().contains("retry-after:"), "\(answer)")
        }
        // The trigger sleeps 30 s: answers before 20 s come from the timeouts (3 s a statement,
        // 2 s for a connection; four PUTs on two connections, under 10 s on a quiet machine).
        #expect(waited < .seconds(20), "\(waited)")

        _ = try await TestPostgres.onThread { RestoreInterruptionTests.psql(url, "DROP TRIGGER rolo_test_sleep ON resources") }
        var status = 0
        let deadline = ContinuousClock.now + .seconds(30)
        while status != 201, ContinuousClock.now < deadline {
            status = try await curlStatus(put + [Self.card("s-5", "Sleep 5"), Self.book(port) + "s-5.vcf"])
            if status != 201 { try await Task.sleep(for: .milliseconds(300)) }
        }
        #expect(status == 201, "the same server writes again")
        let listing = try await curl(Self.auth + ["-X", "PROPFIND", "-H", "Depth: 1", Self.book(port)])
        #expect(listing.contains("s-0.vcf") && listing.contains("s-5.vcf") && !listing.contains("s-1.vcf"), "\(listing)")
        #expect(await serve.terminate() == 0)
    }

    /// A failover as an operator's tooling does it (issue 34): a primary with a synchronous
    /// streaming replica (`pg_basebackup -R`), `rolo serve` given both as one libpq-style
    /// URL (`host1:port1,host2:port2`, `target_session_attrs=read-write`), three writers
    /// PUTting cards, the primary stopped at once (`-m immediate`, as a crash) and the
    /// replica promoted (`pg_promote`) on its own address. Every answer meanwhile is 201 or
    /// 503 with Retry-After (none waits: curl gives up after 60 s and that fails the test);
    /// after the promotion the same process writes again, and every card acknowledged before
    /// or after is there with the ETag its 201 gave.
    @Test func aPromotedReplicaNamedInTheURLTakesTheWritesWithNothingAcknowledgedLost() async throws {
        let primary = try await TestPostgres.onThread { try TestPostgres.startCluster() }
        defer { primary.stop() }
        // The test clusters commit without waiting (synchronous_commit=off on their command
        // line); the database's own setting wins over it, and makes each commit wait for the
        // replica once it is named synchronous below.
        _ = try await TestPostgres.onThread { try primary.psql("ALTER DATABASE postgres SET synchronous_commit = 'on'") }
        let add = try await RoloBinary.run(["user", "add", "olga", "--password-stdin", "--database", primary.url],
                                           stdin: "olga-password\n")
        #expect(add.status == 0, "\(add.stderr)")
        let replica = try await TestPostgres.onThread { try primary.startReplica() }
        defer { replica.stop() }
        _ = try await TestPostgres.onThread { try primary.psql("ALTER SYSTEM SET synchronous_standby_names = '*'") }
        _ = try await TestPostgres.onThread { try primary.psql("SELECT pg_reload_conf()") }
        var syncState = ""
        let syncBy = ContinuousClock.now + .seconds(60)
        while syncState != "sync", ContinuousClock.now < syncBy {
            syncState = (try? await TestPostgres.onThread { try primary.psql("SELECT sync_state FROM pg_stat_replication") }) ?? ""
            if syncState != "sync" { try await Task.sleep(for: .milliseconds(200)) }
        }
        try #require(syncState == "sync", "the replica streams synchronously")

        let primaryPort = try #require(URLComponents(string: primary.url)?.port)
        let replicaPort = try #require(URLComponents(string: replica.url)?.port)
        let url = "postgresql://rolo@127.0.0.1:\(primaryPort),127.0.0.1:\(replicaPort)/postgres?target_session_attrs=read-write"
        let serve = try ServeProcess(database: url, extra: [
            "--database-connection-timeout", "2", "--database-statement-timeout", "5"])
        let port = try await serve.waitUntilListening()

        let tally = TallyBox()
        let writers = Task {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for writer in 1...3 {
                    group.addTask {
                        var index = 0
                        while !tally.withLock({ $0.done }) {
                            index += 1
                            let name = "f-\(writer)-\(index)"
                            let card = Self.card(name, "Failover \(writer) \(index)")
                            let answer = try await curl(["-i", "--max-time", "60"] + Self.auth + [
                                "-X", "PUT", "-H", "Content-Type: text/vcard", "--data-binary", card, Self.book(port) + name + ".vcf"])
                            tally.withLock { $0.record(name: name, card: card, answer: answer) }
                            if !answer.hasPrefix("HTTP/1.1 201") { try await Task.sleep(for: .milliseconds(100)) }
                        }
                    }
                }
                try await group.waitForAll()
            }
        }
        func waitFor(_ what: String, seconds: Int, _ condition: @escaping @Sendable (Tally) -> Bool) async throws {
            let deadline = ContinuousClock.now + .seconds(seconds)
            while !tally.withLock({ condition($0) }), ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(tally.withLock { condition($0) }, "\(what): \(tally.withLock { $0.summary })")
        }

        try await waitFor("cards written on the first primary", seconds: 60) { $0.acknowledged.count >= 30 }
        try await TestPostgres.onThread { try primary.kill() }
        tally.withLock { $0.primaryStopped = true }
        try await waitFor("503s while no server accepts writes", seconds: 60) { $0.refused >= 3 }
        let promoted = try await TestPostgres.onThread { try replica.psql("SELECT pg_promote()") }
        #expect(promoted == "t")
        tally.withLock { $0.promoted = true }
        try await waitFor("cards written on the promoted replica", seconds: 120) { $0.acknowledgedAfterPromotion >= 10 }
        tally.withLock { $0.done = true }
        try await writers.value

        let final = tally.withLock { $0 }
        #expect(final.unexpected.isEmpty, "every answer is 201, or 503 with Retry-After: \(final.unexpected.prefix(3))")
        let listed = try await Self.state(port: port).etags
        for (name, etag) in final.acknowledged {
            #expect(listed.contains("/dav/addressbooks/olga/default/\(name).vcf \(etag)"), "\(name) \(etag) acknowledged, listed: \(listed.count)")
        }
        for (name, card) in final.cards.filter({ final.acknowledged[$0.key] != nil }).prefix(50) {
            #expect(try await curl(Self.auth + [Self.book(port) + name + ".vcf"]) == card, "\(name)")
        }
        #expect(await serve.terminate() == 0)
    }

    /// GETs of cards on PostgreSQL are answered before the HTTP codec too, from one round
    /// trip that reads the card with the login's password stamp (`InlineResourceReads`,
    /// issue 34): the same answers as the full path (a query string sends a GET there);
    /// pipelined requests answered in their order while the store's reads are out; and a
    /// password changed by another process ends the cached login at its next GET.
    @Test func getsOnPostgreSQLAreAnsweredInlineAsTheFullPathAnswersThem() async throws {
        let database = try await Self.databaseWithOlga()
        defer { Task { await database.drop() } }
        let serve = try ServeProcess(database: database.url)
        let port = try await serve.waitUntilListening()
        let ada = Self.card("ada", "Ada Lovelace"), bob = Self.card("bob", "Bob Builder")
        let put = Self.auth + ["-X", "PUT", "-H", "Content-Type: text/vcard", "--data-binary"]
        // The PUT verifies olga's login, so her GETs are answered inline from now on.
        #expect(try await curlStatus(put + [ada, Self.book(port) + "ada.vcf"]) == 201)
        let etag = try await curl(Self.auth + ["-I", Self.book(port) + "ada.vcf"]).components(separatedBy: "\r\n")
            .first { $0.lowercased().hasPrefix("etag:") }.map { String($0.dropFirst(5)).trimmingCharacters(in: .whitespaces) }
        let cases: [[String]] = [[], ["-I"], ["-H", "If-None-Match: \(etag ?? "")"], ["-H", "If-Match: \"x\""]]
        for extra in cases {
            let inline = try await curl(["-i"] + Self.auth + extra + [Self.book(port) + "ada.vcf"])
            let full = try await curl(["-i"] + Self.auth + extra + [Self.book(port) + "ada.vcf?full"])
            let withoutDate = { (text: String) in text.components(separatedBy: "\r\n").filter { !$0.hasPrefix("Date: ") } }
            #expect(withoutDate(inline) == withoutDate(full), "\(extra)")
        }

        // One write of seven requests: each GET waits for its round trip, and what follows it waits too.
        func request(_ method: String, _ name: String, body: String = "") -> String {
            "\(method) /dav/addressbooks/olga/default/\(name) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                + "Authorization: Basic \(Data("olga:olga-password".utf8).base64EncodedString())\r\n"
                + (body.isEmpty ? "" : "Content-Type: text/vcard\r\nContent-Length: \(body.utf8.count)\r\n") + "\r\n" + body
        }
        let pipelined = request("GET", "ada.vcf") + request("PUT", "bob.vcf", body: bob) + request("GET", "bob.vcf")
            + request("GET", "none.vcf") + request("DELETE", "bob.vcf") + request("GET", "bob.vcf") + request("GET", "ada.vcf")
        let answers = try await TestPostgres.onThread { try Self.exchange(port: port, pipelined, answers: 7) }
        #expect(answers.map(\.status) == [200, 201, 200, 404, 204, 404, 200], "\(answers.map(\.status))")
        #expect(answers.count == 7 && answers[0].body == ada && answers[2].body == bob && answers[6].body == ada)

        let passwd = try await RoloBinary.run(["user", "passwd", "olga", "--password-stdin", "--database", database.url],
                                              stdin: "olga-new-password\n")
        #expect(passwd.status == 0, "\(passwd.stderr)")
        #expect(try await curlStatus(Self.auth + [Self.book(port) + "ada.vcf"]) == 401, "the old password's cached login ended")
        #expect(try await curlStatus(["-u", "olga:olga-new-password", Self.book(port) + "ada.vcf"]) == 200)
        #expect(await serve.terminate() == 0)
    }

    /// The inline GET's read runs on a connection of the event loop's own
    /// (`LoopReadConnections`, "rolo GET" in `pg_stat_activity`), GETs arriving together in
    /// one statement, each answered with its own card. PostgreSQL ending those
    /// connections (as a restart or an administrator would) costs no GET its answer: the GETs
    /// right after are answered by the full path, and later ones inline again on new connections.
    @Test func aGetsOwnConnectionEndedByPostgreSQLIsReplaced() async throws {
        let database = try await Self.databaseWithOlga()
        defer { Task { await database.drop() } }
        let serve = try ServeProcess(database: database.url)
        let port = try await serve.waitUntilListening()
        let ada = Self.card("ada", "Ada Lovelace")
        #expect(try await curlStatus(Self.auth + ["-X", "PUT", "-H", "Content-Type: text/vcard", "--data-binary", ada,
                                                  Self.book(port) + "ada.vcf"]) == 201)
        let url = database.url
        func getConnections() async throws -> Set<String> {
            let pids = try await TestPostgres.onThread {
                RestoreInterruptionTests.psql(url, "SELECT pid FROM pg_stat_activity WHERE application_name = 'rolo GET' AND datname = current_database()")
            }
            return Set(pids.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty })
        }
        /// GETs (each must answer ada whole) until a "rolo GET" connection not in `old` is there.
        func getsUntilANewConnection(besides old: Set<String>) async throws -> Set<String> {
            for _ in 0..<100 {
                for _ in 0..<4 { #expect(try await curl(Self.auth + [Self.book(port) + "ada.vcf"]) == ada) }
                let now = try await getConnections()
                if !now.subtracting(old).isEmpty { return now }
                try await Task.sleep(for: .milliseconds(200))
            }
            return []
        }
        let first = try await getsUntilANewConnection(besides: [])
        #expect(!first.isEmpty, "GETs opened a connection of their own")

        // GETs of several clients at once share a statement on their loop's connection
        // (`LoopReadConnections` gathers them); each still gets its own card, or its 404.
        var cards: [String: String] = [:]
        for number in 0..<12 {
            cards["c\(number).vcf"] = Self.card("c\(number)", "Card \(number)")
            #expect(try await curlStatus(Self.auth + ["-X", "PUT", "-H", "Content-Type: text/vcard", "--data-binary",
                                                      cards["c\(number).vcf"]!, Self.book(port) + "c\(number).vcf"]) == 201)
        }
        let names = cards.keys.sorted() + ["none.vcf"], stored = cards
        try await withThrowingTaskGroup(of: Void.self) { group in
            for client in 0..<8 {
                group.addTask {
                    let order = (0..<names.count).map { names[($0 + client) % names.count] }
                    let text = order.map {
                        "GET /dav/addressbooks/olga/default/\($0) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                            + "Authorization: Basic \(Data("olga:olga-password".utf8).base64EncodedString())\r\n\r\n"
                    }.joined()
                    let answers = try await TestPostgres.onThread { try Self.exchange(port: port, text, answers: order.count) }
                    #expect(answers.map(\.status) == order.map { $0 == "none.vcf" ? 404 : 200 }, "client \(client)")
                    for (name, answer) in zip(order, answers) where name != "none.vcf" {
                        #expect(answer.body == stored[name], "client \(client), \(name)")
                    }
                }
            }
            try await group.waitForAll()
        }

        // Every loop's connection open now (the PUTs' reads and the clients may have opened
        // the other loop's too) is ended, and replaced by new ones.
        let open = try await getConnections()
        #expect(open.isSuperset(of: first))
        let ended = try await TestPostgres.onThread {
            RestoreInterruptionTests.psql(url, "SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'rolo GET' AND datname = current_database()) t")
        }
        #expect(Int(ended.trimmingCharacters(in: .whitespacesAndNewlines)) == open.count)
        for _ in 0..<6 { #expect(try await curl(Self.auth + [Self.book(port) + "ada.vcf"]) == ada) }
        let second = try await getsUntilANewConnection(besides: open)
        #expect(!second.isEmpty && second.isDisjoint(with: open), "new connections: \(second), ended: \(open)")
        #expect(await serve.terminate() == 0)
    }

    /// A request on a book finds it on its event loop's connection (`PostgresStore.rowsOnLoop`,
    /// `CollectionByPathSQL`): a book seen there is the committed one (its ctag moves
    /// with a PUT just answered), a book that is not there is 404, and REPORTs find it too; an
    /// incremental sync's changes, read there when few and through the pool when many, are
    /// exactly those since its token.
    @Test func booksFoundOnTheLoopAreTheCommittedOnesAndMissingOnes404() async throws {
        let database = try await Self.databaseWithOlga()
        defer { Task { await database.drop() } }
        let serve = try ServeProcess(database: database.url)
        let port = try await serve.waitUntilListening()
        let propfind = ["-X", "PROPFIND", "-H", "Depth: 0", "-H", "Content-Type: application/xml", "--data-binary",
                        "<d:propfind xmlns:d=\"DAV:\" xmlns:cs=\"http://calendarserver.org/ns/\"><d:prop><cs:getctag/></d:prop></d:propfind>"]
        func ctag() async throws -> String? {
            let body = try await curl(Self.auth + propfind + [Self.book(port)])
            guard let start = body.range(of: "getctag>")?.upperBound, let end = body[start...].range(of: "<")?.lowerBound else { return nil }
            return String(body[start..<end])
        }
        var seen: [String] = []
        for number in 0..<5 {
            let before = try await ctag()
            #expect(before != nil, "a ctag for the book before PUT \(number)")
            #expect(try await curlStatus(Self.auth + ["-X", "PUT", "-H", "Content-Type: text/vcard", "--data-binary",
                                                      Self.card("p\(number)", "Person \(number)"), Self.book(port) + "p\(number).vcf"]) == 201)
            let after = try await ctag()
            #expect(after != nil && after != before, "the ctag moved with PUT \(number): \(before ?? "-") -> \(after ?? "-")")
            if let after { seen.append(after) }
        }
        #expect(Set(seen).count == 5)
        #expect(try await curlStatus(Self.auth + propfind + ["http://127.0.0.1:\(port)/dav/addressbooks/olga/nothing/"]) == 404)
        let sync = try await curl(Self.auth + ["-X", "REPORT", "-H", "Content-Type: application/xml", "--data-binary",
                                               Self.syncBody, Self.book(port)])
        #expect((0..<5).allSatisfy { sync.contains("p\($0).vcf") }, "\(sync)")
        // A multiget of every card with address data (the sync above flagged its full
        // download already: `aMultigetOfTheWholeBookIsFlaggedAndOfPartOfItNot`).
        let multiget = "<c:addressbook-multiget xmlns:d=\"DAV:\" xmlns:c=\"urn:ietf:params:xml:ns:carddav\">"
            + "<d:prop><d:getetag/><c:address-data/></d:prop>"
            + (0..<5).map { "<d:href>/dav/addressbooks/olga/default/p\($0).vcf</d:href>" }.joined() + "</c:addressbook-multiget>"
        let cards = try await curl(Self.auth + ["-X", "REPORT", "-H", "Content-Type: application/xml", "--data-binary", multiget, Self.book(port)])
        #expect((0..<5).allSatisfy { cards.contains("FN:Person \($0)") }, "\(cards)")
        // An incremental sync reads its changes on the loop when they are few
        // (`PostgresStore.changesOnLoop`), through the pool when there are more: both answer
        // exactly the changes since the token, a deletion as 404.
        func incremental(_ token: String) async throws -> (hrefs: Set<String>, deleted: Set<String>, token: String?) {
            let body = try await curl(Self.auth + ["-X", "REPORT", "-H", "Content-Type: application/xml", "--data-binary",
                                                   Self.syncBody.replacingOccurrences(of: "<d:sync-token/>", with: "<d:sync-token>\(token)</d:sync-token>"),
                                                   Self.book(port)])
            var hrefs = Set<String>(), deleted = Set<String>()
            for response in body.components(separatedBy: "<d:response>").dropFirst() {
                guard let open = response.range(of: "<d:href>"), let close = response.range(of: "</d:href>") else { continue }
                let name = String(response[open.upperBound..<close.lowerBound].split(separator: "/").last ?? "")
                if response.contains("HTTP/1.1 404") { deleted.insert(name) } else { hrefs.insert(name) }
            }
            let token = body.range(of: "<d:sync-token>").flatMap { open in
                body.range(of: "</d:sync-token>").map { String(body[open.upperBound..<$0.lowerBound]) } }
            return (hrefs, deleted, token)
        }
        let firstToken = try #require(sync.range(of: "<d:sync-token>").flatMap { open in
            sync.range(of: "</d:sync-token>").map { String(sync[open.upperBound..<$0.lowerBound]) } })
        func request(_ method: String, _ name: String, body: String = "") -> String {
            "\(method) /dav/addressbooks/olga/default/\(name) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                + "Authorization: Basic \(Data("olga:olga-password".utf8).base64EncodedString())\r\n"
                + (body.isEmpty ? "" : "Content-Type: text/vcard\r\n") + "Content-Length: \(body.utf8.count)\r\n\r\n" + body
        }
        let few = request("PUT", "q0.vcf", body: Self.card("q0", "Quentin 0")) + request("DELETE", "p0.vcf")
        _ = try await TestPostgres.onThread { try Self.exchange(port: port, few, answers: 2) }
        let small = try await incremental(firstToken)
        #expect(small.hrefs == ["q0.vcf"] && small.deleted == ["p0.vcf"], "\(small)")
        let secondToken = try #require(small.token)
        let many = (1...510).map { request("PUT", "q\($0).vcf", body: Self.card("q\($0)", "Quentin \($0)")) }.joined()
        let manyAndDelete = many + request("DELETE", "p1.vcf")
        let answers = try await TestPostgres.onThread { try Self.exchange(port: port, manyAndDelete, answers: 511) }
        #expect(answers.allSatisfy { $0.status == 201 || $0.status == 204 }, "\(Set(answers.map(\.status)))")
        let large = try await incremental(secondToken)
        #expect(large.hrefs == Set((1...510).map { "q\($0).vcf" }) && large.deleted == ["p1.vcf"],
                "\(large.hrefs.count) changed, deleted \(large.deleted)")
        #expect(await serve.terminate() == 0)
        let access = try await RoloBinary.run(["access", "olga", "--json", "--database", database.url])
        #expect(access.status == 0, "\(access.stderr)")
        #expect(access.stdout.contains("\"full_download\" : true") || access.stdout.contains("\"full_download\":true"), "\(access.stdout)")
    }

    /// A multiget with address data counts the book with its first page of cards (on the
    /// loop's connection, `CardsByNameSQL`'s count): one of every card is flagged as a full
    /// download in the access history, one of part of the book is not.
    @Test func aMultigetOfTheWholeBookIsFlaggedAndOfPartOfItNot() async throws {
        let database = try await Self.databaseWithOlga()
        defer { Task { await database.drop() } }
        func multiget(_ port: Int, _ numbers: Range<Int>) async throws -> String {
            let body = "<c:addressbook-multiget xmlns:d=\"DAV:\" xmlns:c=\"urn:ietf:params:xml:ns:carddav\">"
                + "<d:prop><d:getetag/><c:address-data/></d:prop>"
                + numbers.map { "<d:href>/dav/addressbooks/olga/default/p\($0).vcf</d:href>" }.joined() + "</c:addressbook-multiget>"
            return try await curl(Self.auth + ["-X", "REPORT", "-H", "Content-Type: application/xml", "--data-binary", body,
                                               Self.book(port)])
        }
        func flagged() async throws -> Bool {
            let access = try await RoloBinary.run(["access", "olga", "--json", "--database", database.url])
            #expect(access.status == 0, "\(access.stderr)")
            #expect(access.stdout.contains("full_download"), "\(access.stdout)")
            return access.stdout.contains("\"full_download\" : true") || access.stdout.contains("\"full_download\":true")
        }
        var serve = try ServeProcess(database: database.url)
        var port = try await serve.waitUntilListening()
        for number in 0..<3 {
            #expect(try await curlStatus(Self.auth + ["-X", "PUT", "-H", "Content-Type: text/vcard", "--data-binary",
                                                      Self.card("p\(number)", "Person \(number)"), Self.book(port) + "p\(number).vcf"]) == 201)
        }
        let part = try await multiget(port, 0..<2)
        #expect(part.contains("FN:Person 0") && part.contains("FN:Person 1") && !part.contains("FN:Person 2"), "\(part)")
        #expect(await serve.terminate() == 0)
        #expect(try await !flagged())
        serve = try ServeProcess(database: database.url)
        port = try await serve.waitUntilListening()
        let whole = try await multiget(port, 0..<3)
        #expect((0..<3).allSatisfy { whole.contains("FN:Person \($0)") }, "\(whole)")
        #expect(await serve.terminate() == 0)
        #expect(try await flagged())
    }

    /// Sends `text` in one write and reads `answers` answers (status and body by
    /// `Content-Length`) from one connection.
    static func exchange(port: Int, _ text: String, answers count: Int) throws -> [(status: Int, body: String)] {
        let socket = try LoopbackSocket.connect(port: port)
        defer { close(socket) }
        let bytes = Array(text.utf8)
        var sent = 0
        while sent < bytes.count {
            let written = bytes[sent...].withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard written > 0 else { break }
            sent += written
        }
        var received: [UInt8] = [], answers: [(status: Int, body: String)] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while answers.count < count {
            let separator = Array("\r\n\r\n".utf8)
            if let end = (0..<max(received.count - 3, 0)).first(where: { Array(received[$0..<$0 + 4]) == separator }) {
                let head = String(decoding: received[..<end], as: UTF8.self)
                let length = head.components(separatedBy: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                    .flatMap { Int($0.dropFirst(15).trimmingCharacters(in: .whitespaces)) } ?? 0
                if received.count >= end + 4 + length {
                    let status = Int(head.split(separator: " ").dropFirst().first ?? "") ?? 0
                    answers.append((status, String(decoding: received[(end + 4)..<(end + 4 + length)], as: UTF8.self)))
                    received.removeFirst(end + 4 + length)
                    continue
                }
            }
            let read = recv(socket, &buffer, buffer.count, 0)
            guard read > 0 else { break }
            received += buffer[..<read]
        }
        return answers
    }

    /// The tally, shared by the writers and the test (a `Mutex` cannot be captured).
    final class TallyBox: Sendable {
        private let tally = Mutex(Tally())
        func withLock<T: Sendable>(_ body: (inout Tally) -> T) -> T { tally.withLock { body(&$0) } }
    }

    /// What the failover test's writers were answered.
    struct Tally: Sendable {
        var done = false, primaryStopped = false, promoted = false
        /// Each acknowledged card's name and the ETag its 201 gave.
        var acknowledged: [String: String] = [:]
        var cards: [String: String] = [:]
        var acknowledgedAfterPromotion = 0
        /// 503 with Retry-After.
        var refused = 0
        /// Any other answer (a timeout is an empty one).
        var unexpected: [String] = []

        var summary: String {
            "\(acknowledged.count) acknowledged (\(acknowledgedAfterPromotion) after the promotion), \(refused) refused, \(unexpected.count) other"
        }

        mutating func record(name: String, card: String, answer: String) {
            let headers = answer.components(separatedBy: "\r\n\r\n").first ?? ""
            if headers.hasPrefix("HTTP/1.1 201"),
               let line = headers.components(separatedBy: "\r\n").first(where: { $0.lowercased().hasPrefix("etag:") }) {
                acknowledged[name] = line.dropFirst(5).trimmingCharacters(in: .whitespaces)
                cards[name] = card
                if promoted { acknowledgedAfterPromotion += 1 }
            } else if headers.hasPrefix("HTTP/1.1 503"), headers.lowercased().contains("retry-after:") {
                refused += 1
            } else {
                unexpected.append(answer.isEmpty ? "no answer (\(name))" : String(answer.prefix(300)))
            }
        }
    }

    struct BookState: Equatable, CustomStringConvertible {
        /// Each card's href and ETag, sorted by href.
        var etags: [String]
        var token: String?
        var description: String { "\(etags) token \(token ?? "none")" }
    }

    /// The book as a client's initial sync sees it.
    static func state(port: Int) async throws -> BookState {
        let answer = try await curl(auth + ["-X", "REPORT", "-H", "Content-Type: application/xml", "--data-binary", syncBody,
                                            book(port)])
        func inner(_ text: Substring, _ tag: String) -> String? {
            guard let open = text.range(of: "<d:\(tag)>"),
                  let close = text.range(of: "</d:\(tag)>", range: open.upperBound..<text.endIndex) else { return nil }
            return String(text[open.upperBound..<close.lowerBound])
        }
        let etags = answer.components(separatedBy: "<d:response>").dropFirst().compactMap { response -> String? in
            let text = Substring(response)
            guard let href = inner(text, "href"), let etag = inner(text, "getetag") else { return nil }
            return href + " " + etag
        }
        return BookState(etags: etags.sorted(), token: inner(Substring(answer), "sync-token"))
    }
}
