import Foundation
import RoloSQLite
import RoloStore

/// `RoloBench history [CARDS] [EDITS]` (issue 31): a book of CARDS cards (default 10,000,
/// one in four with a 20 KB photo, as phones' books hold them) written by PUTs, then every
/// card edited EDITS times (default 10; the name changes, the photo stays): the PUT rate
/// with history on, the book's bytes and the history's bytes.
func runHistoryBenchmark(_ arguments: [String]) async {
    let count = arguments.first.flatMap(Int.init) ?? 10_000
    let edits = arguments.count > 1 ? Int(arguments[1]) ?? 10 : 10
    let photo = Data((0..<15_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }).base64EncodedString()
    var folded = "PHOTO;ENCODING=b;TYPE=JPEG:", rest = Substring(photo)
    folded += rest.prefix(48); rest = rest.dropFirst(48)
    while !rest.isEmpty { folded += "\r\n " + rest.prefix(74); rest = rest.dropFirst(74) }
    func card(_ index: Int, edit: String) -> CardImport {
        var card = generatedCard(index, edit: edit)
        if index % 4 == 0 {
            var text = String(decoding: card.data, as: UTF8.self)
            text = text.replacingOccurrences(of: "END:VCARD\r\n", with: folded + "\r\nEND:VCARD\r\n")
            card.data = Data(text.utf8)
        }
        return card
    }
    do {
        let store = try SQLiteStore.temporary()
        defer { try? store.close() }
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
            let elapsed = ContinuousClock.now - start
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            if round == 0 || round == edits {
                print("history: \(round == 0 ? "first" : "last") round of \(count) puts by 8 tasks: "
                      + String(format: "%.0f cards/s", Double(count) / seconds))
            }
        }
        let bookBytes = try await store.usedBytes(owner: "bench")
        let historyBytes = try await store.historyBytes()
        print("history: book \(bookBytes / 1024) KiB; history of \(edits + 1) versions a card \(historyBytes / 1024) KiB "
              + String(format: "(%.2f × the book)", Double(historyBytes) / Double(bookBytes)))
    } catch {
        FileHandle.standardError.write(Data("history benchmark failed: \(error)\n".utf8))
        exit(1)
    }
}
