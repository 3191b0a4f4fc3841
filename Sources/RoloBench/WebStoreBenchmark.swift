import CardIndexing
import Foundation
import RoloPostgres
import RoloSQLite
import RoloStore

/// `RoloBench web-store [count] [--postgres URL]`: the store reads behind the web UI's pages on one book of
/// generated cards (default 50 000): the first list page, a deep page, a letter jump,
/// searches (common, rare, absent), the capped count, duplicate candidates. Prints p50
/// and p95 of each over 50 runs: the web UI's aim is p95 under 20 ms per page, of which
/// these reads are the store's share. With `--postgres URL`, on a `PostgresStore` of that
/// database (emptied first: give it a scratch database, e.g. `scripts/pg-cluster.sh start`'s).
func runWebStoreBenchmark(_ arguments: [String]) async {
    var arguments = arguments
    var postgresURL: String?
    if let flag = arguments.firstIndex(of: "--postgres"), flag + 1 < arguments.count {
        postgresURL = arguments[flag + 1]
        arguments.removeSubrange(flag...flag + 1)
    }
    let count = arguments.compactMap(Int.init).first ?? 50_000
    do {
        let store: any RoloStore
        let closeStore: @Sendable () async -> Void
        if let postgresURL {
            let postgres = try await PostgresStore.open(try PostgresStore.Configuration(url: postgresURL))
            try await postgres.eraseAll()
            store = postgres
            closeStore = { await postgres.close() }
        } else {
            let sqlite = try SQLiteStore.temporary()
            store = sqlite
            closeStore = { try? sqlite.close() }
        }
        print("web-store: on \(postgresURL == nil ? "SQLite" : "PostgreSQL")")
        try await store.createUser(name: "bench", password: "bench")
        let book = try await store.collection(owner: "bench", path: ["default"])!
        let cards = (0..<count).map { generatedCard($0) }
        let start = ContinuousClock.now
        try await store.importCards(collectionID: book.id, cards: cards, batchSize: 1000, progress: nil)
        await store.importFinished(collectionID: book.id, cards: cards.count)
        webReport("import of \(count) cards with list rows", "\(ContinuousClock.now - start)")

        let middle = try await store.cardListings(collectionID: book.id, filter: .contacts, search: [],
                                                  from: .after(ListingCursor(sortKey: "j", name: "")), limit: 50).rows[0]
        let phases: [(String, @Sendable () async throws -> String)] = [
            ("first page (50 rows)", {
                "\(try await store.cardListings(collectionID: book.id, filter: .contacts, search: [], from: .first, limit: 50).rows.count) rows"
            }),
            ("a page in the middle (keyset cursor)", {
                try await store.cardListings(collectionID: book.id, filter: .contacts, search: [],
                                             from: .after(ListingCursor(sortKey: middle.fields.sortKey, name: middle.name)),
                                             limit: 50).rows.count.description + " rows"
            }),
            ("letter jump to z", {
                try await store.cardListings(collectionID: book.id, filter: .contacts, search: [],
                                             from: .after(ListingCursor(sortKey: "z", name: "")), limit: 50).rows.count.description + " rows"
            }),
            ("search 'ann' (common), page and count", { try await searchPage(store, book.id, "ann") }),
            ("search 'smith 4242' (rare), page and count", { try await searchPage(store, book.id, "smith 4242") }),
            ("search '7946 0042' (phone digits), page and count", { try await searchPage(store, book.id, "7946 0042") }),
            ("search 'zqx' (absent), page and count", { try await searchPage(store, book.id, "zqx") }),
            ("count of the book, capped at 1000", {
                "\(try await store.cardCount(collectionID: book.id, filter: .contacts, search: [], cap: 1000))"
            }),
            ("one card's list row and body (contact view)", {
                _ = try await store.resource(collectionID: book.id, name: middle.name)
                return "\(try await store.cardListings(collectionID: book.id, names: [middle.name]).count) row"
            }),
        ]
        for (label, phase) in phases {
            var times: [Double] = []
            var rows = ""
            for _ in 0..<50 {
                let started = ContinuousClock.now
                rows = try await phase()
                let elapsed = ContinuousClock.now - started
                times.append(elapsed.inSeconds * 1000)
            }
            times.sort()
            webReport("\(label) on \(count) cards: \(rows)",
                   String(format: "p50 %.2f ms, p95 %.2f ms", times[times.count / 2], times[times.count * 95 / 100]))
        }
        let started = ContinuousClock.now
        let groups = try await store.duplicateCandidates(collectionID: book.id, limit: 100)
        webReport("duplicate candidates on \(count) cards (\(groups.count) groups)", "\(ContinuousClock.now - started)")
        await closeStore()
    } catch {
        FileHandle.standardError.write(Data("web-store benchmark failed: \(error)\n".utf8))
        exit(1)
    }
}

/// A search as the list page runs it: the first 50 rows and the count up to 1000.
private func searchPage(_ store: any RoloStore, _ book: Int64, _ text: String) async throws -> String {
    let words = CardListingFields.searchWords(text)
    let page = try await store.cardListings(collectionID: book, filter: .contacts, search: words, from: .first, limit: 50)
    let count = try await store.cardCount(collectionID: book, filter: .contacts, search: words, cap: 1000)
    return "\(page.rows.count) rows, count \(count)"
}
private func webReport(_ what: String, _ figure: String) { print("web-store: \(what): \(figure)") }
