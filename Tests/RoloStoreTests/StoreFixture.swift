import Foundation
@testable import RoloStore

/// A store on a real SQLite file in a fresh temporary folder, with user "alice" and her
/// address book `default`. Tests call `close()` when done.
struct StoreFixture {
    let store: SQLiteStore
    let book: CollectionInfo

    static func make(tuning: SQLiteStore.Tuning = .default) async throws -> StoreFixture {
        let store = try SQLiteStore.temporary(bcryptCost: 4, tuning: tuning)
        try await store.createUser(name: "alice", password: "secret")
        let book = try await store.collection(owner: "alice", path: ["default"])!
        return StoreFixture(store: store, book: book)
    }

    func close() { try? store.close() }

    @discardableResult
    func put(_ name: String, uid: String? = nil, fn: String = "Someone", extra: [IndexEntry] = [],
             members: [String] = [], kind: String = "individual",
             precondition: WritePrecondition = .none) async throws -> PutResult {
        let uid = uid ?? name
        let data = Data(vcard(uid: uid, fn: fn).utf8)
        return try await store.putResource(
            collectionID: book.id, name: name, data: data, contentType: "text/vcard; charset=utf-8",
            card: CardMetadata(uid: uid, kind: kind,
                               indexEntries: [IndexEntry(property: "UID", value: uid), IndexEntry(property: "FN", value: fn)] + extra,
                               members: members),
            precondition: precondition)
    }
}

func vcard(uid: String, fn: String) -> String {
    "BEGIN:VCARD\r\nVERSION:4.0\r\nUID:\(uid)\r\nFN:\(fn)\r\nEND:VCARD\r\n"
}
