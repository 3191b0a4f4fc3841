import CardIndexing
import Foundation
import RoloSQLite
import RoloStore
import VCard

/// `RoloBench history [CARDS] [EDITS] [shared]` (issue 31): a book of CARDS cards (default
/// 10,000, one in four with a 20 KB photo of its own, as phones' books hold them; with
/// `shared` all the same photo) written by PUTs, then every
/// card edited EDITS times (default 10; the name changes, the photo stays); then an import
/// of CARDS new cards into a second book and a second import that replaces them all. Run
/// twice on scratch databases: with card versions, and without them (the version triggers
/// dropped, `keepNoVersionsForBenchmark`), so the PUT and import rates and the file sizes
/// side by side are what history costs. Then, with versions: the history's bytes, and the
/// time to undo 5,000 changes (`rolo restore --to`: read the book's versions, plan, apply).
func runHistoryBenchmark(_ arguments: [String]) async {
    let count = arguments.first.flatMap(Int.init) ?? 10_000
    let edits = arguments.count > 1 ? Int(arguments[1]) ?? 10 : 10
    // Each card its own photo, as in a phone's book; `shared` gives every card the same
    // one (the history then keeps one photo for the whole book).
    let sharedPhoto = arguments.count > 2 && arguments[2] == "shared"
    func photoLine(_ seed: Int) -> String {
        let photo = (Data(String(seed).utf8) + Data((0..<15_000).map { UInt8(truncatingIfNeeded: ($0 &+ seed) &* 31) }))
            .base64EncodedString()
        var folded = "PHOTO;ENCODING=b;TYPE=JPEG:", rest = Substring(photo)
        folded += rest.prefix(48); rest = rest.dropFirst(48)
        while !rest.isEmpty { folded += "\r\n " + rest.prefix(74); rest = rest.dropFirst(74) }
        return folded
    }
    let photos = (0..<count).filter { $0 % 4 == 0 }.map { photoLine(sharedPhoto ? 0 : $0) }
    func card(_ index: Int, edit: String) -> CardImport {
        var card = generatedCard(index, edit: edit)
        if index % 4 == 0 {
            var text = String(decoding: card.data, as: UTF8.self)
            text = text.replacingOccurrences(of: "END:VCARD\r\n", with: photos[index / 4] + "\r\nEND:VCARD\r\n")
            card.data = Data(text.utf8)
        }
        // Metadata read from the bytes, as a PUT reads it (`generatedCard`'s keeps the UID
        // without its "urn:uuid:"): the undo's writes compare the UID they read with the stored one.
        if let parsed = try? VCardParser.parse(Array(card.data)).first { card.card = CardMetadata(card: parsed) }
        return card
    }
    func rate(_ cards: Int, since start: ContinuousClock.Instant) -> String {
        String(format: "%.0f cards/s", Double(cards) / (ContinuousClock.now - start).inSeconds)
    }
    do {
        var fileBytes: [Bool: Int64] = [:]
        for versions in [true, false] {
            let mode = versions ? "versions on" : "versions off"
            let store = try SQLiteStore.temporary()
            defer { try? store.close() }
            if !versions { try await store.keepNoVersionsForBenchmark() }
            try await store.createUser(name: "bench", password: "bench-password")
            let book = try await store.collection(owner: "bench", path: ["default"])!
            for round in 0...edits {
                let cards = (0..<count).map { card($0, edit: round == 0 ? "" : " edit \(round)") }
                let start = ContinuousClock.now
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for writer in 0..<8 {
                        group.addTask {
                            for card in stride(from: writer, to: cards.count, by: 8).map({ cards[$0] }) {
                                _ = try await store.putResource(collectionID: book.id, name: card.name, data: card.data,
                                                                contentType: card.contentType, card: card.card, precondition: .none)
                            }
                        }
                    }
                    try await group.waitForAll()
                }
                if round <= 1 || round == edits {
                    print("history (\(mode)): \(round == 0 ? "new cards" : "edit round \(round)"), \(count) puts by 8 tasks: "
                          + rate(count, since: start))
                }
            }
            // The book edited EDITS times: its file beside the same without versions, and the
            // history's own bytes (bodies, shared parts, version rows; no SQLite overhead).
            try await store.checkpoint()
            fileBytes[versions] = ["", "-wal"].compactMap {
                (try? FileManager.default.attributesOfItem(atPath: store.path + $0)[.size] as? NSNumber)?.int64Value
            }.reduce(0, +)
            if versions {
                let bookBytes = try await store.usedBytes(owner: "bench")
                let historyBytes = try await store.historyBytes()
                print("history: book \(bookBytes / 1024) KiB; history of \(edits + 1) versions a card \(historyBytes / 1024) KiB "
                      + String(format: "(%.2f × the book)", Double(historyBytes) / Double(bookBytes)))
            }
            try await store.createCollection(owner: "bench", path: ["imported"], kind: .addressBook, displayName: nil, description: nil)
            let imported = try await store.collection(owner: "bench", path: ["imported"])!
            for (label, edit) in [("new cards", ""), ("every card replaced", " imported again")] {
                let cards = (0..<count).map { card($0, edit: edit) }
                let start = ContinuousClock.now
                try await store.importCards(collectionID: imported.id, cards: cards, batchSize: 1000, progress: nil)
                await store.importFinished(collectionID: imported.id, cards: cards.count)
                print("history (\(mode)): import of \(count) cards, \(label): " + rate(count, since: start))
            }
            guard versions else { continue }

            // Undo 5,000 changes: a device changes 5,000 cards after `since`, then the book
            // is put back as it was at `since`, as `rolo restore --to` does.
            let undone = min(5_000, count)
            let since = Date()
            try await Task.sleep(for: .milliseconds(20))
            for index in 0..<undone {
                let edited = card(index, edit: " damaged")
                _ = try await store.putResource(collectionID: book.id, name: edited.name, data: edited.data,
                                                contentType: edited.contentType, card: edited.card, precondition: .none)
            }
            let start = ContinuousClock.now
            let read = try await store.bookVersions(collectionID: book.id, since: since)
            let plan = UndoPlan(versions: read, since: since, author: nil)
            let planned = ContinuousClock.now
            _ = try await CardHistory.apply(plan, collectionID: book.id, in: store)
            let done = ContinuousClock.now
            let restored = try await store.resource(collectionID: book.id, name: card(0, edit: "").name)
            guard plan.steps.count == undone, restored?.data == card(0, edit: " edit \(edits)").data else {
                throw BenchmarkFailure("the undo planned \(plan.steps.count) steps, expected \(undone)")
            }
            print("history: undo of \(undone) changes (rolo restore --to): \(historyMilliseconds(done - start)) ms "
                  + "(versions read and plan \(historyMilliseconds(planned - start)) ms, one transaction \(historyMilliseconds(done - planned)) ms)")
        }
        let on = fileBytes[true] ?? 0, off = fileBytes[false] ?? 0
        print("history: database file after the edits \(on / 1_048_576) MiB with versions, \(off / 1_048_576) MiB without: "
              + "the history takes \((on - off) / 1_048_576) MiB on disk")
    } catch {
        FileHandle.standardError.write(Data("history benchmark failed: \(error)\n".utf8))
        exit(1)
    }
}

private func historyMilliseconds(_ duration: Duration) -> String {
    String(format: "%.0f", duration.inSeconds * 1000)
}

struct BenchmarkFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
