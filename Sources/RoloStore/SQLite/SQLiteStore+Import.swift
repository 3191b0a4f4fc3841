import Foundation
import GRDB

extension SQLiteStore {
    /// Each batch is one transaction with one seq per card. A card replaces the resource of
    /// the same name; when its UID belongs to another name, that resource is deleted (a
    /// tombstone for syncing clients) so the UID stays unique. ETags and folds are computed
    /// on every core, the next batch's while the current one is written.
    public func importCards(collectionID: Int64, cards: [CardImport], batchSize: Int,
                            progress: (@Sendable (Int) -> Void)?) async throws {
        for card in cards { try Naming.validate(card.name, what: "resource") }
        let batchSize = max(batchSize, 1)
        let batches = stride(from: 0, to: cards.count, by: batchSize).map { cards[$0..<min($0 + batchSize, cards.count)] }
        var next = batches.first.map { first in Task { await Self.prepare(first) } }
        defer { next?.cancel() }
        var done = 0
        for (index, batch) in batches.enumerated() {
            guard let prepared = next else { break }
            let writes = await prepared.value
            next = index + 1 < batches.count ? Task { [following = batches[index + 1]] in await Self.prepare(following) } : nil
            try await pool.write { db in try Self.importBatch(db, writes: writes, collectionID: collectionID) }
            done += batch.count
            progress?(done)
        }
    }

    /// ETags and folded index entries of `cards`, in order, computed in one chunk per core.
    static func prepare(_ cards: ArraySlice<CardImport>) async -> [ResourceWrite] {
        let chunkCount = min(ProcessInfo.processInfo.activeProcessorCount, max(cards.count / 512, 1))
        guard chunkCount > 1 else { return cards.map(ResourceWrite.init) }
        let chunkSize = (cards.count + chunkCount - 1) / chunkCount
        return await withTaskGroup(of: (start: Int, writes: [ResourceWrite]).self) { group in
            for start in stride(from: cards.startIndex, to: cards.endIndex, by: chunkSize) {
                let chunk = cards[start..<min(start + chunkSize, cards.endIndex)]
                group.addTask { (start, chunk.map(ResourceWrite.init)) }
            }
            var chunks: [(start: Int, writes: [ResourceWrite])] = []
            for await chunk in group { chunks.append(chunk) }
            return chunks.sorted { $0.start < $1.start }.flatMap(\.writes)
        }
    }

    private static func importBatch(_ db: Database, writes: [ResourceWrite], collectionID: Int64) throws {
        var seq = try collectionRow(db, id: collectionID).syncSeq
        let now = Self.now
        let statements = try ResourceStatements(db)
        for write in writes {
            seq += 1
            // Most imported cards are new: the insert finds that out by itself, sparing two
            // lookups per card; only a taken name or UID takes the long way.
            if try statements.insert(write, collectionID: collectionID, seq: seq, now: now) { continue }
            if let uid = write.card?.uid, let owner = try resourceName(db, collectionID: collectionID, uid: uid),
               owner != write.name, let other = try existingResource(db, collectionID: collectionID, name: owner) {
                try removeResource(db, collectionID: collectionID, id: other.id, name: owner, seq: seq, now: now)
                seq += 1
            }
            if let existing = try existingResource(db, collectionID: collectionID, name: write.name) {
                try statements.replace(id: existing.id, with: write, collectionID: collectionID, seq: seq, now: now)
            } else if try !statements.insert(write, collectionID: collectionID, seq: seq, now: now) {
                throw StoreError.alreadyExists // unreachable: the name is free and the UID's owner was removed
            }
        }
        try setSyncSeq(db, collectionID: collectionID, seq: seq, now: now)
    }
}
