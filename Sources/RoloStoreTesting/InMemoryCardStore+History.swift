import Foundation
import RoloStore

/// Card versions held in memory, kept by `Book.store` and `Book.remove` as the back ends'
/// trigger keeps them, and pruned by the same rule (`HistoryRetention`).
extension InMemoryCardStore: CardHistoryStore {
    public func cardVersions(collectionID: Int64, name: String) throws -> [CardVersion] {
        try state.book(collectionID).versions.filter { $0.name == name }
    }

    public func bookVersions(collectionID: Int64, since date: Date) throws -> [CardVersion] {
        let versions = try state.book(collectionID).versions
        let changed = Set(versions.filter { $0.at > date }.map(\.name))
        var baseline: [String: Int64] = [:]
        for version in versions where changed.contains(version.name) && version.at <= date {
            baseline[version.name] = max(baseline[version.name] ?? 0, version.seq)
        }
        return versions.filter { $0.at > date || baseline[$0.name] == $0.seq }
    }

    public func pruneCardVersions(now: Date, retention: HistoryRetention) throws -> Int {
        let cutoff = retention.cutoff(now: now)
        return try transaction { state in
            var dropped = 0
            for id in Array(state.collections.keys) {
                var book = try state.book(id)
                var newer: [String: Int] = [:]
                var older: [String: Int] = [:]
                var kept: [CardVersion] = []
                for version in book.versions.reversed() {
                    newer[version.name, default: 0] += 1
                    if version.at < cutoff { older[version.name, default: 0] += 1 }
                    if newer[version.name]! > retention.versions && version.at < cutoff && older[version.name]! > 1 {
                        dropped += 1
                    } else {
                        kept.append(version)
                    }
                }
                book.versions = kept.reversed()
                state.collections[id] = book
            }
            state.historyCompleteSince = max(state.historyCompleteSince ?? cutoff, cutoff)
            return dropped
        }
    }

    public func historyCompleteSince() -> Date? { state.historyCompleteSince }

    public func historyBytes() throws -> Int64 {
        var bodies: [String: Int] = [:]
        var rows = 0
        for book in state.collections.values {
            for version in book.versions {
                if let etag = version.etag { bodies[etag] = version.data?.count ?? 0 }
                rows += version.name.utf8.count + (version.etag?.utf8.count ?? 0) + 32
            }
        }
        return Int64(bodies.values.reduce(0, +) + rows)
    }
}
