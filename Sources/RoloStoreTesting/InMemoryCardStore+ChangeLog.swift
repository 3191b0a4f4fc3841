import Foundation
import RoloStore

extension InMemoryCardStore {
    /// A token `s` stays valid until a tombstone newer than `s` is compacted away; seq 0
    /// (a client holding nothing) is always valid and is told of no deletions.
    public func changes(collectionID: Int64, since seq: Int64, limit: Int?) throws -> ChangeSet {
        let book = try state.book(collectionID)
        let current = book.info.syncSeq
        if seq < 0 || seq > current { throw StoreError.invalidSyncToken }
        if seq > 0 && seq < book.minimumValidSeq { throw StoreError.syncTokenTooOld }
        let changes = book.changes
            .filter { $0.value.seq > seq && (seq > 0 || !$0.value.deleted) }
            .map { ChangeSet.Change(name: $0.key, deleted: $0.value.deleted, seq: $0.value.seq) }
            .sorted { $0.seq < $1.seq }
        if let limit, changes.count > max(limit, 0) {
            let page = Array(changes.prefix(max(limit, 0)))
            return ChangeSet(changes: page, newSeq: page.last?.seq ?? seq, truncated: true)
        }
        return ChangeSet(changes: changes, newSeq: current, truncated: false)
    }

    /// Drops the tombstones older than `date` (a put's row stays: it is how an initial sync
    /// finds the resource); each book's tokens older than its newest dropped tombstone
    /// become too old.
    public func compactChanges(olderThan date: Date) {
        for (id, book) in state.collections {
            let dropped = book.changes.filter { $0.value.deleted && $0.value.at < date }
            guard let newest = dropped.map(\.value.seq).max() else { continue }
            state.collections[id]!.minimumValidSeq = max(book.minimumValidSeq, newest)
            for name in dropped.map(\.key) { state.collections[id]!.changes[name] = nil }
        }
    }

    /// Newest first. The double keeps no app passwords (`AccountStore`'s role), so it names
    /// only the account password (credential 0); a change made with an app password has
    /// its user and no credential name.
    public func attributedChanges(collectionID: Int64, limit: Int) -> [AttributedChange] {
        guard let book = state.collections[collectionID] else { return [] }
        return book.changes.sorted { $0.value.seq > $1.value.seq }.prefix(max(limit, 0)).map { name, row in
            AttributedChange(name: name, deleted: row.deleted, seq: row.seq, at: row.at, user: row.author?.user,
                             credential: row.author?.credentialID == 0 ? "account password" : nil)
        }
    }
}

extension InMemoryCardStore {
    /// The double's own invariants, as `integrityCheck` states a back end's: each book's UID
    /// map is its cards' UIDs, each resource has its live change row at its seq, no change
    /// is newer than the book, and every parent exists. Empty when all hold.
    public func integrityCheck() -> [String] {
        var problems: [String] = []
        for (id, book) in state.collections.sorted(by: { $0.key < $1.key }) {
            if let parent = book.parentID, state.collections[parent] == nil { problems.append("book \(id): no parent \(parent)") }
            let cards = book.resources.values.filter { $0.uid != nil }
            if cards.count != book.uids.count || !cards.allSatisfy({ book.uids[$0.uid!]?.isExactly($0.info.name) == true }) { problems.append("book \(id): UID map differs from its cards") }
            for (name, resource) in book.resources where book.changes[name].map({ $0.deleted || $0.seq != resource.info.seq }) ?? true {
                problems.append("book \(id): \(name) has no change row at seq \(resource.info.seq)")
            }
            for (name, row) in book.changes where row.seq > book.info.syncSeq {
                problems.append("book \(id): \(name) changed at \(row.seq), after the book's \(book.info.syncSeq)")
            }
            for name in book.properties.map(\.key) where !name.isEmpty && book.resources[name] == nil {
                problems.append("book \(id): dead properties of a missing \(name)")
            }
        }
        return problems
    }
}
