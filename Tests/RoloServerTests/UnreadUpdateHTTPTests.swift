import Foundation
import Logging
import PostgresTestSupport
import RoloServer
@testable import RoloPostgres
import RoloStore
import Testing

/// A PUT with one `If-Match` ETag, or of a new card (`If-None-Match: *`), by the owner of the
/// book, on PostgreSQL alone on its database, reads nothing before its batch: the login's
/// stamp and the book come from memory (`CardCache.writeTarget`), and the batch's statement
/// judges the ETag and the UID on the row it updates (`BatchUnreadSQL`), or fails on a name
/// or UID taken. Through real HTTP, every rule a read PUT keeps is kept: a stale or unknown
/// ETag is 412 and writes nothing, a card that exists is 412 to a new one, a changed or
/// taken UID is 403, a lock is 423, a changed password signs the old one out, another user
/// sees nothing, and with another process on the database every PUT reads first again.
@Suite struct UnreadUpdateHTTPTests {
    static let book = "/dav/addressbooks/alice/default/"

    /// A Rolo server on a PostgreSQL database of the test's own, serving from memory (its
    /// notices heard, alone), with users alice and bob.
    struct Server {
        let store: PostgresStore
        let database: TestDatabase
        let port: Int

        func request(_ method: String, _ path: String, user: String = "alice", password: String? = nil,
                     headers: [String: String] = [:], body: Data? = nil) async throws -> CurlResult {
            try await TestServer.request(base: "http://127.0.0.1:\(port)", method, path, user: user, password: password,
                                         headers: headers, body: body)
        }

        func put(_ name: String, uid: String, fullName: String, ifMatch: String) async throws -> CurlResult {
            try await request("PUT", UnreadUpdateHTTPTests.book + name,
                              headers: DAVFlowTests.vcardType.merging(["If-Match": ifMatch]) { $1 },
                              body: DAVFlowTests.card(uid: uid, name: fullName))
        }

        /// Writes that went to their batch with nothing read (`WriteBatches.unreadCount`).
        var unread: Int { store.writeBatches.unreadCount }
    }

    static func with(_ body: (Server) async throws -> Void) async throws {
        let database = try await TestDatabase.create()
        let store = try await PostgresStore.open(try database.configuration())
        // A heartbeat patient enough for a loaded machine (`CardCacheTests.patient`).
        store.noticesPatience = .seconds(120)
        var running: RunningServer?
        do {
            for (name, password) in TestServer.users { try await store.createUser(name: name, password: password) }
            let deadline = ContinuousClock.now + .seconds(30)
            while !store.cardCache.isServing, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
            try #require(store.cardCache.isServing)
            let configuration = ServerConfiguration(port: 0, databasePath: "", logLevel: .warning)
            running = try await RoloServer.make(configuration: configuration, store: store).start()
            try await body(Server(store: store, database: database, port: running!.port))
        } catch {
            try? await running?.shutdown()
            await store.close()
            await database.drop()
            throw error
        }
        try await running?.shutdown()
        await store.close()
        await database.drop()
    }

    @Test func anUpdateByETagIsJudgedOnTheCardItWrites() async throws {
        try await Self.with { server in
            // With no precondition a PUT reads first and keeps nothing (`mayWriteUnread`).
            let created = try await server.request("PUT", Self.book + "ada.vcf", headers: DAVFlowTests.vcardType,
                                                   body: DAVFlowTests.card(uid: "ada-1", name: "Ada One"))
            #expect(created.status == 201)
            let first = try #require(created.headers["etag"])
            // The first update reads the card with the sign-in, and keeps the book for the next.
            let second = try await server.put("ada.vcf", uid: "ada-1", fullName: "Ada Two", ifMatch: first)
            #expect(second.status == 204, "\(second.text)")
            #expect(server.unread == 0)
            let etag2 = try #require(second.headers["etag"])

            let third = try await server.put("ada.vcf", uid: "ada-1", fullName: "Ada Three", ifMatch: etag2)
            #expect(third.status == 204, "\(third.text)")
            #expect(server.unread == 1, "the update went to its batch unread")
            let etag3 = try #require(third.headers["etag"])
            let read = try await server.request("GET", Self.book + "ada.vcf")
            #expect(read.text.contains("FN:Ada Three") && read.headers["etag"] == etag3)

            // A stale ETag, or one of no card: 412, nothing written, nothing created.
            let stale = try await server.put("ada.vcf", uid: "ada-1", fullName: "Ada Stale", ifMatch: etag2)
            #expect(stale.status == 412, "\(stale.text)")
            let missing = try await server.put("nobody.vcf", uid: "nobody-1", fullName: "Nobody", ifMatch: etag3)
            #expect(missing.status == 412, "\(missing.text)")
            #expect(server.unread == 3, "both were sent unread and judged by the statement's failure")
            #expect(try await server.request("GET", Self.book + "nobody.vcf").status == 404)
            let unchanged = try await server.request("GET", Self.book + "ada.vcf")
            #expect(unchanged.text.contains("FN:Ada Three") && unchanged.headers["etag"] == etag3)

            // A UID the card does not have: refused as any PUT's (403, the holder named).
            let otherUID = try await server.put("ada.vcf", uid: "someone-else", fullName: "Ada", ifMatch: etag3)
            #expect(otherUID.status == 403, "\(otherUID.text)")
            #expect(otherUID.errorConditions == [UIDChangeHTTPTests.condition], "\(otherUID.text)")
            #expect(try await server.request("GET", Self.book + "ada.vcf").headers["etag"] == etag3)

            // Another user's PUT to alice's book is never unread, and finds nothing.
            let bob = try await server.request("PUT", Self.book + "ada.vcf", user: "bob",
                                               headers: DAVFlowTests.vcardType.merging(["If-Match": etag3]) { $1 },
                                               body: DAVFlowTests.card(uid: "ada-1", name: "Bob's Ada"))
            #expect(bob.status == 404, "\(bob.text)")
            #expect(server.unread == 4)

            // Eight racing updates naming one ETag, unread: one wins, the others are 412.
            let raced = try await withThrowingTaskGroup(of: (Int, CurlResult).self) { group in
                for index in 0..<8 {
                    group.addTask { (index, try await server.put("ada.vcf", uid: "ada-1", fullName: "Ada Race \(index)", ifMatch: etag3)) }
                }
                return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
            }
            let winners = raced.filter { $0.value.status == 204 }
            #expect(winners.count == 1 && raced.values.filter { $0.status == 412 }.count == 7,
                    "\(raced.mapValues(\.status))")
            if let (index, winner) = winners.first {
                let now = try await server.request("GET", Self.book + "ada.vcf")
                #expect(now.text.contains("FN:Ada Race \(index)") && now.headers["etag"] == winner.headers["etag"])
            }

            // The changes feed holds every write once, in order.
            let integrity = try await server.store.integrityCheck()
            #expect(integrity == [], "\(integrity)")
        }
    }

    @Test func aNewCardIsJudgedByItsBatch() async throws {
        try await Self.with { server in
            func create(_ name: String, uid: String, fullName: String, user: String = "alice",
                        headers: [String: String] = [:]) async throws -> CurlResult {
                try await server.request("PUT", Self.book + name, user: user,
                                         headers: DAVFlowTests.vcardType.merging(["If-None-Match": "*"]) { $1 }
                                             .merging(headers) { $1 },
                                         body: DAVFlowTests.card(uid: uid, name: fullName))
            }
            // The first new card reads with the sign-in, and keeps the book for the next.
            #expect(try await create("ada.vcf", uid: "ada-1", fullName: "Ada").status == 201)
            #expect(server.unread == 0)
            let grace = try await create("grace.vcf", uid: "grace-1", fullName: "Grace Hopper")
            #expect(grace.status == 201, "\(grace.text)")
            #expect(server.unread == 1, "the new card went to its batch unread")
            let read = try await server.request("GET", Self.book + "grace.vcf")
            #expect(read.text.contains("FN:Grace Hopper") && read.headers["etag"] == grace.headers["etag"])

            // A name taken: 412, the card as it was. A UID taken: 403 naming its holder.
            let again = try await create("ada.vcf", uid: "ada-1", fullName: "Ada Again")
            #expect(again.status == 412, "\(again.text)")
            #expect(try await server.request("GET", Self.book + "ada.vcf").text.contains("FN:Ada\r\n"))
            let twin = try await create("twin.vcf", uid: "ada-1", fullName: "Ada's Twin")
            #expect(twin.status == 403, "\(twin.text)")
            #expect(twin.errorConditions == [UIDChangeHTTPTests.condition], "\(twin.text)")
            #expect(twin.text.contains("ada.vcf"), "\(twin.text)")
            #expect(try await server.request("GET", Self.book + "twin.vcf").status == 404)
            #expect(server.unread == 3, "both were sent unread and judged by the statement's failure")

            // Another user's new card in alice's book is never unread, and is not written.
            let bob = try await create("bob.vcf", uid: "bob-1", fullName: "Bob", user: "bob")
            #expect(!(200..<300).contains(bob.status), "\(bob.text)")
            #expect(server.unread == 3)
            #expect(try await server.request("GET", Self.book + "bob.vcf").status == 404)

            // Eight new cards at once go unread together; eight racing for one name: one wins.
            let many = try await withThrowingTaskGroup(of: CurlResult.self) { group in
                for index in 0..<8 { group.addTask { try await create("many-\(index).vcf", uid: "many-\(index)", fullName: "Many \(index)") } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(many.map(\.status) == Array(repeating: 201, count: 8))
            #expect(server.unread == 11)
            let raced = try await withThrowingTaskGroup(of: (Int, CurlResult).self) { group in
                for index in 0..<8 {
                    group.addTask { (index, try await create("race.vcf", uid: "race-\(index)", fullName: "Race \(index)")) }
                }
                return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
            }
            let winners = raced.filter { $0.value.status == 201 }
            #expect(winners.count == 1 && raced.values.filter { $0.status == 412 }.count == 7, "\(raced.mapValues(\.status))")
            if let (index, winner) = winners.first {
                let now = try await server.request("GET", Self.book + "race.vcf")
                #expect(now.text.contains("FN:Race \(index)") && now.headers["etag"] == winner.headers["etag"])
            }

            // A lock on the book: a new card without its token is 423, with it 201.
            let lock = try await server.request("LOCK", Self.book, headers: [
                "Content-Type": "application/xml", "Timeout": "Second-600", "Depth": "infinity",
            ], body: Data("""
                <?xml version="1.0" encoding="utf-8"?>
                <D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockinfo>
                """.utf8))
            #expect(lock.status == 200, "\(lock.text)")
            let token = try #require(lock.headers["lock-token"])
            #expect(try await create("locked.vcf", uid: "locked-1", fullName: "Locked Out").status == 423)
            #expect(try await server.request("GET", Self.book + "locked.vcf").status == 404)
            #expect(try await create("locked.vcf", uid: "locked-1", fullName: "Locked In", headers: ["If": "(\(token))"]).status == 201)
            #expect(try await server.request("UNLOCK", Self.book, headers: ["Lock-Token": token]).status == 204)

            // Every card once in the changes feed, every row where it belongs.
            let integrity = try await server.store.integrityCheck()
            #expect(integrity == [], "\(integrity)")
        }
    }

    @Test func aPasswordChangeALockAndAnotherProcessEachStopUnreadUpdates() async throws {
        try await Self.with { server in
            let created = try await server.request("PUT", Self.book + "ada.vcf", headers: DAVFlowTests.vcardType,
                                                   body: DAVFlowTests.card(uid: "ada-1", name: "Ada"))
            var etag = try #require(created.headers["etag"])
            func update(_ name: String, password: String? = nil, headers: [String: String] = [:]) async throws -> CurlResult {
                try await server.request("PUT", Self.book + "ada.vcf", password: password,
                                         headers: DAVFlowTests.vcardType.merging(["If-Match": etag]) { $1 }.merging(headers) { $1 },
                                         body: DAVFlowTests.card(uid: "ada-1", name: name))
            }
            for round in 0..<2 {
                let put = try await update("Ada \(round)")
                #expect(put.status == 204)
                etag = try #require(put.headers["etag"])
            }
            #expect(server.unread == 1)

            // A new password: the old one no longer signs in, unread or not.
            try await server.store.setPassword(user: "alice", password: "new-secret")
            #expect(try await update("Ada old password").status == 401)
            let renewed = try await update("Ada new password", password: "new-secret")
            #expect(renewed.status == 204)
            etag = try #require(renewed.headers["etag"])
            let afterPassword = server.unread
            let warm = try await update("Ada warm", password: "new-secret")
            etag = try #require(warm.headers["etag"])
            #expect(server.unread == afterPassword + 1)

            // A lock on the card: a PUT without its token is 423, though the book was kept.
            let lock = try await server.request("LOCK", Self.book + "ada.vcf", password: "new-secret", headers: [
                "Content-Type": "application/xml", "Timeout": "Second-600",
            ], body: Data("""
                <?xml version="1.0" encoding="utf-8"?>
                <D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockinfo>
                """.utf8))
            #expect(lock.status == 200, "\(lock.text)")
            let token = try #require(lock.headers["lock-token"])
            #expect(try await update("Ada locked out", password: "new-secret").status == 423)
            let withToken = try await update("Ada with the token", password: "new-secret", headers: ["If": "(\(token))"])
            #expect(withToken.status == 204, "\(withToken.text)")
            etag = try #require(withToken.headers["etag"])
            #expect(try await server.request("UNLOCK", Self.book + "ada.vcf", password: "new-secret",
                                             headers: ["Lock-Token": token]).status == 204)

            // Another process on the database: every PUT reads first.
            let other = try await PostgresStore.open(try server.database.configuration())
            do {
                let deadline = ContinuousClock.now + .seconds(30)
                while server.store.cardCache.isAlone, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
                #expect(!server.store.cardCache.isAlone)
                let before = server.unread
                for round in 0..<3 {
                    let put = try await update("Ada with company \(round)", password: "new-secret")
                    #expect(put.status == 204)
                    etag = try #require(put.headers["etag"])
                }
                #expect(server.unread == before)
            } catch {
                await other.close()
                throw error
            }
            await other.close()
        }
    }
}
