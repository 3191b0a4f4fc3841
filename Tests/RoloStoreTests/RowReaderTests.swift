import Foundation
import GRDB
import Synchronization
import Testing
@testable import RoloStore

/// The single-row reads that block their thread (`readOnCallingThread`) must never wait for
/// a reader of the async pool: a thread blocked there can be the one the holder of that
/// reader needs to resume, and the server stops answering.
@Suite struct RowReaderTests {
    @Test func singleRowReadsAnswerWhileEveryPoolReaderIsHeld() async throws {
        let store = try SQLiteStore.temporary(bcryptCost: 4, tuning: SQLiteStore.Tuning(maximumReaders: 1))
        defer { try? store.close() }
        try await store.createUser(name: "alice", password: "secret")
        let book = try #require(try await store.collection(owner: "alice", path: ["default"]))
        let data = Data(vcard(uid: "u1", fn: "Ann").utf8)
        _ = try await store.putResource(
            collectionID: book.id, name: "ann.vcf", data: data, contentType: "text/vcard",
            card: CardMetadata(uid: "u1", kind: "individual", indexEntries: [], members: []), precondition: .none)

        // Hold the pool's only reader on another thread until released (or 5 s pass).
        let holding = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let released = Atomic<Bool>(false)
        Thread.detachNewThread {
            try? store.pool.read { _ in
                holding.signal()
                _ = release.wait(timeout: .now() + 5)
                released.store(true, ordering: .sequentiallyConsistent)
            }
        }
        holding.wait()
        defer { release.signal() }

        let found = try await store.resource(owner: "alice", collectionPath: ["default"], name: "ann.vcf")
        #expect(found?.resource.data == data)
        #expect(released.load(ordering: .sequentiallyConsistent) == false,
                "the single-row read waited for the pool's reader")
    }
}
