import Crypto
import Foundation
import Logging
import PostgresTestSupport
@testable import RoloPostgres
import RoloPush
import RoloStore
import Synchronization
import Testing

/// Several processes on one PostgreSQL database, each with its notifier (issue 20): every
/// notifier hears every committed change, and exactly one sends each message, whichever
/// process (or command without a notifier) made the change.
@Suite struct MultiProcessPushTests {
    @Test func eachChangeIsDeliveredOnceWhicheverProcessMadeIt() async throws {
        let database = try await TestDatabase.create()
        var stores: [PostgresStore] = []
        var runs: [Task<Void, Never>] = []
        func cleanUp() async {
            // Bounded: a notifier that ignores its cancellation fails this test rather than
            // stalling the whole suite (server shutdown waits for the same task).
            for (index, run) in runs.enumerated() {
                run.cancel()
                let ended = await withTimeout(.seconds(30)) { await run.value }
                #expect(ended, "notifier \(index + 1) had not ended 30 s after its cancellation")
            }
            for store in stores { await store.close() }
            await database.drop()
        }
        do {
            for _ in 0..<3 { stores.append(try await PostgresStore.open(try database.configuration(poolSize: 2))) }
            let (first, second, command) = (stores[0], stores[1], stores[2])
            try await first.createUser(name: "alice", password: "pw")
            let book = try #require(try await first.collection(owner: "alice", path: ["default"]))
            let registration = try await first.registerPush(PushRegistrationRequest(
                user: "alice", collectionID: book.id, credentialID: 0, pushResource: "https://push.example/device",
                publicKey: P256.KeyAgreement.PrivateKey().publicKey.x963Representation,
                authSecret: Data((0..<16).map { _ in UInt8.random(in: 0...255) }), expires: Date().addingTimeInterval(86_400)),
                limit: 10)

            let delivered = Deliveries()
            var logger = Logger(label: "multi-process-push")
            logger.logLevel = .critical
            for store in [first, second] {
                let notifier = PushNotifier(store: store, settings: PushNotifierSettings(quietPeriod: .milliseconds(50),
                                                                                           maximumDelay: .seconds(1)),
                                            logger: logger, syncToken: { "sync/\($0)/\($1)" }) { delivery in
                    delivered.texts.withLock { $0.append(String(decoding: delivery.plaintext, as: UTF8.self)) }
                    return .delivered
                }
                runs.append(Task { await notifier.run() })
            }
            // Both notifiers listen once their first sweep ran.
            try await Task.sleep(for: .seconds(1))

            func put(_ store: PostgresStore, _ name: String) async throws {
                let data = Data("BEGIN:VCARD\r\nVERSION:4.0\r\nUID:\(name)\r\nFN:\(name)\r\nEND:VCARD\r\n".utf8)
                _ = try await store.putResource(collectionID: book.id, name: name, data: data, contentType: "text/vcard",
                                                card: CardMetadata(uid: name, kind: "individual", indexEntries: [], members: []),
                                                precondition: .none)
            }
            /// Waits (up to 30 s: a loaded machine) for the `count`th delivery, then a second
            /// more for a wrong, extra one to show.
            func settle(until count: Int) async throws {
                let deadline = ContinuousClock.now + .seconds(30)
                while delivered.texts.withLock({ $0.count }) < count, ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(50))
                }
                try await Task.sleep(for: .seconds(1))
            }
            /// The seq up to which the registration's messages are claimed (sent or spared).
            func claimedSeq() async throws -> Int64 {
                try await command.autocommit { connection in
                    try await connection.first("SELECT last_sent_seq FROM push_registrations WHERE id = \(registration.id)")?
                        .decode(Int64.self) ?? -1
                }
            }

            try await put(second, "a.vcf")
            try await settle(until: 1)
            #expect(delivered.texts.withLock { $0.count } == 1)
            #expect(delivered.texts.withLock { $0.last?.contains("sync/\(book.id)/1") } == true)

            // A write through a process without a notifier (`rolo import`): announced once.
            try await put(command, "b.vcf")
            try await settle(until: 2)
            #expect(delivered.texts.withLock { $0.count } == 2)
            #expect(delivered.texts.withLock { $0.last?.contains("sync/\(book.id)/2") } == true)

            // A write whose request left the registration out (Push-Dont-Notify): nothing is
            // sent, and nothing stays owed (a process catching up would not send it later).
            try await PushExclusion.$current.withValue(.registrations(user: "alice", ids: [registration.id])) {
                try await put(first, "c.vcf")
            }
            // A notifier marks seq 3 as spared once it has taken the change (a fixed wait was
            // too short at a load average of 35).
            let deadline = ContinuousClock.now + .seconds(30)
            while try await claimedSeq() < 3, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
            try await Task.sleep(for: .seconds(1))
            #expect(delivered.texts.withLock { $0.count } == 2)
            #expect(try await command.claimPushDelivery(registrationID: registration.id, seq: 3) == false)
        } catch {
            await cleanUp()
            throw error
        }
        await cleanUp()
    }
}

/// The messages the notifiers handed to their push transport.
final class Deliveries: Sendable {
    let texts = Mutex<[String]>([])
}
