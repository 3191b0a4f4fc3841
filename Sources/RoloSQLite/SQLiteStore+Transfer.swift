import Foundation
import RoloStore
import GRDB

extension SQLiteStore {
    public func transferResource(collectionID: Int64, name: String, sourceETag: String,
                                 to targetCollectionID: Int64, name targetName: String,
                                 data: Data, contentType: String, card: CardMetadata?, move: Bool) async throws -> PutResult {
        try Naming.validateResource(targetName)
        let write = ResourceWrite(name: targetName, data: data, contentType: contentType, card: card)
        let (result, sequences) = try await pool.write { db in
            guard let source = try Self.existingResource(db, collectionID: collectionID, name: name) else {
                throw StoreError.notFound
            }
            guard source.etag == sourceETag else { throw StoreError.preconditionFailed }
            let now = self.now
            // Each touched collection advances its sequence once per change it records.
            var sequences: [Int64: Int64] = [:]
            func nextSeq(_ id: Int64) throws -> Int64 {
                let seq = try (sequences[id] ?? Self.collectionRow(db, id: id).syncSeq) + 1
                sequences[id] = seq
                return seq
            }
            // The target's dead properties become the source's (copied before a move
            // deletes the source's along with it).
            try db.execute(sql: "DELETE FROM dead_properties WHERE collection_id = ? AND resource = ?",
                           arguments: [targetCollectionID, targetName])
            try db.execute(sql: """
                INSERT INTO dead_properties (collection_id, resource, namespace, name, xml, language)
                SELECT ?, ?, namespace, name, xml, language FROM dead_properties WHERE collection_id = ? AND resource = ?
                """, arguments: [targetCollectionID, targetName, collectionID, name])
            if move {
                try Self.removeResource(db, collectionID: collectionID, id: source.id, name: name,
                                        seq: nextSeq(collectionID), now: now, author: write.author)
            }
            let existing = try Self.checkWrite(db, collectionID: targetCollectionID, name: targetName, card: card,
                                               precondition: .none)
            let seq = try nextSeq(targetCollectionID)
            let statements = ResourceStatements(db)
            if let existing {
                try statements.replace(id: existing.id, with: write, collectionID: targetCollectionID, seq: seq, now: now)
            } else if try !statements.insert(write, collectionID: targetCollectionID, seq: seq, now: now) {
                throw StoreError.alreadyExists // unreachable: name and UID were checked above
            }
            for (id, last) in sequences { try Self.setSyncSeq(db, collectionID: id, seq: last, now: now) }
            return (PutResult(etag: write.etag, created: existing == nil, seq: seq), sequences)
        }
        for (id, last) in sequences { bookChanges.publish(collectionID: id, seq: last) }
        return result
    }
}
