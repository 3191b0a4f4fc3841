import Foundation
import PostgresNIO
import RoloStore

extension PostgresStore {
    /// Each batch is one transaction with one seq per card, holding the book's row lock. A
    /// card replaces the resource of the same name; when its UID belongs to another name,
    /// that resource is deleted (a tombstone for syncing clients) so the UID stays unique.
    /// Most imported cards are new: each is one statement (`insert`), and only a taken name
    /// or UID takes the long way.
    public func importCards(collectionID: Int64, cards: [CardImport], batchSize: Int,
                            progress: (@Sendable (Int) -> Void)?) async throws {
        for card in cards { try Naming.validateResource(card.name) }
        let batchSize = max(batchSize, 1)
        var done = 0
        for start in stride(from: 0, to: cards.count, by: batchSize) {
            let batch = cards[start..<min(start + batchSize, cards.count)]
            // Imports are not attributed in the change log, as in `SQLiteStore`.
            let writes = batch.map { card in
                var write = ResourceWrite(card)
                write.author = nil
                return write
            }
            let now = self.now
            let seq = try await transaction { connection in
                try await Self.importBatch(connection, writes: writes, collectionID: collectionID, now: now)
            }
            await committed(collectionID: collectionID, seq: seq)
            done += batch.count
            progress?(done)
        }
        if !cards.isEmpty { substringIndex.bookChangedInBulk(collectionID) }
    }

    /// An import is a burst of writes the store knows the end of: the tidying a PUT burst
    /// gets once it pauses (`BurstTidying`, the same threshold) runs here at once, before
    /// `rolo import` (a process of its own) ends. Only speed depends on it: the cards are
    /// committed.
    public func importFinished(collectionID: Int64, cards: Int) async {
        guard tidying.threshold > 0, cards >= tidying.threshold else { return }
        await tidy(afterWriting: cards)
    }

    /// Returns the book's sync position after the batch.
    private static func importBatch(_ connection: Connection, writes: [ResourceWrite], collectionID: Int64,
                                    now: Double) async throws -> Int64 {
        guard let row = try await connection.first("""
            SELECT sync_seq FROM collections WHERE id = \(collectionID) FOR UPDATE
            """) else { throw StoreError.notFound }
        var seq = try row.decode(Int64.self)
        for write in writes {
            seq += 1
            if try await insert(connection, write, collectionID: collectionID, seq: seq, now: now) != nil { continue }
            if let uid = write.card?.uid, let owner = try await resourceName(connection, collectionID: collectionID, uid: uid),
               owner != write.name, let other = try await existingResource(connection, collectionID: collectionID, name: owner) {
                try await removeResource(connection, collectionID: collectionID, id: other.id, name: owner, seq: seq, now: now,
                                         author: nil)
                seq += 1
            }
            if let existing = try await existingResource(connection, collectionID: collectionID, name: write.name) {
                try await replace(connection, id: existing.id, with: write, collectionID: collectionID, seq: seq, now: now)
            } else if try await insert(connection, write, collectionID: collectionID, seq: seq, now: now) == nil {
                throw StoreError.alreadyExists // unreachable: the name is free and the UID's owner was removed
            }
        }
        try await connection.execute("""
            UPDATE collections SET sync_seq = \(seq), modified = \(now) WHERE id = \(collectionID)
            """)
        return seq
    }
}
