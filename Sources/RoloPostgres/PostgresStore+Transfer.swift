import Foundation
import PostgresNIO
import RoloStore

extension PostgresStore {
    public func transferResource(collectionID: Int64, name: String, sourceETag: String,
                                 to targetCollectionID: Int64, name targetName: String,
                                 data: Data, contentType: String, card: CardMetadata?, move: Bool) async throws -> PutResult {
        try Naming.validateResource(targetName)
        let write = ResourceWrite(name: targetName, data: data, contentType: contentType, card: card)
        let now = self.now
        let (result, sequences) = try await transaction { connection in
            // Both books' rows, locked in id order (two transfers the opposite way between the
            // same books then wait for each other instead of deadlocking).
            var current: [Int64: Int64] = [:]
            for row in try await connection.rows("""
                SELECT id, sync_seq FROM collections WHERE id = ANY(\([collectionID, targetCollectionID])::BIGINT[]) ORDER BY id FOR UPDATE
                """) {
                let (id, seq) = try row.decode((Int64, Int64).self)
                current[id] = seq
            }
            guard let source = try await Self.existingResource(connection, collectionID: collectionID, name: name) else {
                throw StoreError.notFound
            }
            guard source.etag == sourceETag else { throw StoreError.preconditionFailed }
            // Each touched collection advances its sequence once per change it records.
            var sequences: [Int64: Int64] = [:]
            func nextSeq(_ id: Int64) throws -> Int64 {
                guard let last = sequences[id] ?? current[id] else { throw StoreError.notFound }
                sequences[id] = last + 1
                return last + 1
            }
            // The target's dead properties become the source's (copied before a move
            // deletes the source's along with it).
            try await connection.execute("""
                DELETE FROM dead_properties WHERE collection_id = \(targetCollectionID) AND resource = \(targetName)
                """)
            try await connection.execute("""
                INSERT INTO dead_properties (collection_id, resource, namespace, name, xml, language)
                SELECT \(targetCollectionID), \(targetName), namespace, name, xml, language FROM dead_properties
                WHERE collection_id = \(collectionID) AND resource = \(name)
                """)
            if move {
                try await Self.removeResource(connection, collectionID: collectionID, id: source.id, name: name,
                                              seq: try nextSeq(collectionID), now: now, author: write.author)
            }
            let existing = try await Self.checkWrite(connection, collectionID: targetCollectionID, name: targetName, card: card,
                                                     precondition: .none)
            let seq = try nextSeq(targetCollectionID)
            if let existing {
                try await Self.replace(connection, id: existing.id, with: write, collectionID: targetCollectionID, seq: seq, now: now)
            } else if try await Self.insert(connection, write, collectionID: targetCollectionID, seq: seq, now: now) == nil {
                throw StoreError.alreadyExists // unreachable: name and UID were checked above
            }
            for (id, last) in sequences {
                try await connection.execute("UPDATE collections SET sync_seq = \(last), modified = \(now) WHERE id = \(id)")
            }
            return (PutResult(etag: write.etag, created: existing == nil, seq: seq), sequences)
        }
        for (id, last) in sequences { await committed(collectionID: id, seq: last) }
        return result
    }
}
