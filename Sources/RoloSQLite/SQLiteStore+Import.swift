import Foundation
import RoloStore
import GRDB

extension SQLiteStore {
    /// Each batch is one transaction with one seq per card. A card replaces the resource of
    /// the same name; when its UID belongs to another name, that resource is deleted (a
    /// tombstone for syncing clients) so the UID stays unique. ETags and folds are computed
    /// on the other cores while the writer stores the cards (see `PreparedWrites`), and the
    /// next batch's while the current one commits.
    public func importCards(collectionID: Int64, cards: [CardImport], batchSize: Int,
                            progress: (@Sendable (Int) -> Void)?) async throws {
        for card in cards { try Naming.validateResource(card.name) }
        let batchSize = max(batchSize, 1)
        let batches = stride(from: 0, to: cards.count, by: batchSize).map { cards[$0..<min($0 + batchSize, cards.count)] }
        var next = batches.first.map(PreparedWrites.init)
        var done = 0
        for (index, batch) in batches.enumerated() {
            guard let writes = next else { break }
            next = index + 1 < batches.count ? PreparedWrites(batches[index + 1]) : nil
            let now = self.now
            let seq = try await pool.write { [readAnchor] db in
                readAnchor.release()
                let seq = try Self.importBatch(db, writes: writes, collectionID: collectionID, now: now)
                // A batch is big enough to write the index in order itself.
                try Self.mergePendingIndex(db)
                return seq
            }
            bookChanges.publish(collectionID: collectionID, seq: seq)
            readAnchor.holdNewest()
            pendingIndex.reset()
            done += batch.count
            progress?(done)
        }
        if !cards.isEmpty { substringIndex.bookChangedInBulk(collectionID) }
    }

    /// Returns the book's sync position after the batch.
    private static func importBatch(_ db: Database, writes: PreparedWrites, collectionID: Int64, now: Double) throws -> Int64 {
        var seq = try collectionRow(db, id: collectionID).syncSeq
        let statements = ResourceStatements(db)
        for write in (0..<writes.chunkCount).lazy.flatMap(writes.take) {
            seq += 1
            // Most imported cards are new: the insert finds that out by itself, sparing two
            // lookups per card; only a taken name or UID takes the long way.
            if try statements.insert(write, collectionID: collectionID, seq: seq, now: now) { continue }
            if let uid = write.card?.uid, let owner = try resourceName(db, collectionID: collectionID, uid: uid),
               owner != write.name, let other = try existingResource(db, collectionID: collectionID, name: owner) {
                try removeResource(db, collectionID: collectionID, id: other.id, name: owner, seq: seq, now: now, author: nil)
                seq += 1
            }
            if let existing = try existingResource(db, collectionID: collectionID, name: write.name) {
                try statements.replace(id: existing.id, with: write, collectionID: collectionID, seq: seq, now: now)
            } else if try !statements.insert(write, collectionID: collectionID, seq: seq, now: now) {
                throw StoreError.alreadyExists // unreachable: the name is free and the UID's owner was removed
            }
        }
        try setSyncSeq(db, collectionID: collectionID, seq: seq, now: now)
        return seq
    }
}
