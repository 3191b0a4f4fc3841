import Foundation
import GRDB

extension SQLiteStore {
    /// Each batch is one transaction with one seq per card. A card replaces the resource of
    /// the same name; when its UID belongs to another name, that resource is deleted (a
    /// tombstone for syncing clients) so the UID stays unique.
    public func importCards(collectionID: Int64, cards: [CardImport], batchSize: Int,
                            progress: (@Sendable (Int) -> Void)?) async throws {
        for card in cards { try Naming.validate(card.name, what: "resource") }
        let batchSize = max(batchSize, 1)
        var done = 0
        for start in stride(from: 0, to: cards.count, by: batchSize) {
            let batch = cards[start..<min(start + batchSize, cards.count)]
            let etags = batch.map { ETag.of($0.data) }
            try await pool.write { db in
                var seq = try Self.collectionRow(db, id: collectionID).syncSeq
                let now = self.now
                for (card, etag) in zip(batch, etags) {
                    seq += 1
                    if let owner = try Self.resourceName(db, collectionID: collectionID, uid: card.card.uid),
                       owner != card.name,
                       let other = try Self.existingResource(db, collectionID: collectionID, name: owner) {
                        try Self.removeResource(db, collectionID: collectionID, id: other.id, name: owner, seq: seq, now: now)
                        seq += 1
                    }
                    let existing = try Self.existingResource(db, collectionID: collectionID, name: card.name)
                    try Self.writeResource(db, collectionID: collectionID, existingID: existing?.id, name: card.name,
                                           data: card.data, contentType: card.contentType, etag: etag, card: card.card,
                                           seq: seq, now: now)
                }
                try Self.setSyncSeq(db, collectionID: collectionID, seq: seq, now: now)
            }
            done += batch.count
            progress?(done)
        }
    }
}
