import CardIndexing
import Foundation
import RoloStore
import VCard

/// `RoloBench card-rows [--file CARDS.vcf] [--rounds R]`: what every write computes from a
/// parsed card before the store sees it, µs a card on one thread (best of R rounds): the
/// index rows and list row together (`CardMetadata(card:)`) and the list row alone
/// (`CardListingFields(card:)`). carddav-bench's cards make a fair file:
/// `Benchmarks/carddav-bench`'s `generate_cards`, concatenated. Without a file, the shared
/// corpus.
func runCardRowsBenchmark(_ arguments: [String]) {
    var path = "../shared/vcards"
    var rounds = 7
    var index = 0
    while index < arguments.count {
        let value = index + 1 < arguments.count ? arguments[index + 1] : ""
        switch arguments[index] {
        case "--file": path = value
        case "--rounds": rounds = Int(value) ?? rounds
        default:
            FileHandle.standardError.write(Data("usage: RoloBench card-rows [--file CARDS.vcf] [--rounds R]\n".utf8))
            exit(2)
        }
        index += 2
    }
    var isFolder: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
        print("card-rows: skipped (\(path) not found)")
        return
    }
    let files = isFolder.boolValue
        ? ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted().map { path + "/" + $0 }
        : [path]
    let cards = files.flatMap { file in
        (try? Data(contentsOf: URL(fileURLWithPath: file))).flatMap { try? VCardParser.parse(Array($0)) } ?? []
    }
    guard !cards.isEmpty else {
        print("card-rows: no cards in \(path)")
        return
    }
    let clock = ContinuousClock()
    var sink = 0
    // Each fold's table is built by Foundation the first time a text needs it: once a process,
    // on whichever request gets there first unless the server built them at start.
    let tables = clock.measure { sink &+= CaseFolding.search("é").utf8.count + CaseFolding.unicode("é").utf8.count }
    func best(_ work: () -> Void) -> Double {
        var fastest = Duration.seconds(1_000_000)
        for _ in 0..<rounds { fastest = min(fastest, clock.measure(work)) }
        return fastest.inSeconds / Double(cards.count) * 1e6
    }
    let metadata = best { for card in cards { sink &+= CardMetadata(card: card).indexEntries.count } }
    let listing = best { for card in cards { sink &+= CardListingFields(card: card).searchText.utf8.count } }
    print(String(format: "card-rows: %d cards from %@, best of %d rounds", cards.count, path, rounds))
    print(String(format: "  the folds' tables, built  %.2f ms, once", tables.inSeconds * 1e3))
    print(String(format: "  CardMetadata(card:)       %.2f µs a card", metadata))
    print(String(format: "  CardListingFields(card:)  %.2f µs a card", listing))
    if sink == 42 { print("") }
}
