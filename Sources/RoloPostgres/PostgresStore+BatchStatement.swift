import Foundation
import PostgresNIO
import RoloStore

/// A batch of PUTs to one book judged by one statement and written by another
/// (`WriteBatches`), where each card took a statement of its own (two for an update: its
/// look-up and its write), a round trip each inside the book's turn. A batch is now three
/// statements: the lock, the look-up, the write; two for new cards only (If-None-Match: *),
/// which need no look-up. The cluster's time a card barely moved with it (about 0.7 ms):
/// that is the rows (index, list row, history trigger, foreign-key checks), so an update
/// also rewrites only the index rows that changed (`sameIndexEntry`) and a list row only
/// when it did (`listingConflictSQL`). Docs/performance.md has the figures (issue 34).
///
/// Judged together only when every write is a card and no two share a name or a UID: then what
/// each write finds (its name's resource, its UID's holder) is what it would find after the
/// writes before it, since a PUT never deletes and never changes a card's UID in place
/// (`WriteRules`). Otherwise the batch goes one write at a time (`PostgresStore.put`).
extension PostgresStore {
    /// Each write's answer, in order; nil when the batch must go one write at a time (a write
    /// is no card, or two share a name or a UID). Writes the accepted ones with the seqs after
    /// `firstSeq`, the last of them made the book's; throws, and the transaction then holds
    /// nothing, when a statement failed.
    func putTogether(_ connection: Connection, _ batch: [WriteBatches.Pending], collectionID: Int64, firstSeq: Int64,
                     now: Double, announce: (PushExclusion) async throws -> Void) async throws -> [Result<PutResult, any Error>]? {
        let writes = batch.map(\.write)
        guard Self.canGoTogether(writes) else { return nil }

        writeBatches.countedTogether()
        // Each name's resource (id, ETag, UID) and its UID's holder.
        let targets: [(Int64?, String?, String?, String?)]
        if batch.allSatisfy({ $0.precondition == .ifNoneMatchAny }) {
            // New cards only (how clients upload them, and an import): written without a
            // look-up, as `put` writes one; a name or UID already taken leaves its row out, and
            // the batch then goes write by write, each judged (`BatchMismatch`).
            targets = Array(repeating: (nil, nil, nil, nil), count: writes.count)
        } else {
            let found = try await connection.rows(BatchTargetsSQL.self, collectionID, writes.map(\.name),
                                                  writes.map { $0.card?.uid.withoutNUL ?? "" })
            guard found.count == writes.count else { throw BatchMismatch() }
            targets = try found.map { try $0.decode((Int64?, String?, String?, String?).self) }
        }
        var results: [Result<PutResult, any Error>] = []
        var accepted: [AcceptedWrite] = []
        var exclusion: PushExclusion?
        var seq = firstSeq
        for (pending, (id, etag, storedUID, holder)) in zip(batch, targets) {
            var existing: ExistingResource?
            if let id, let etag { existing = ExistingResource(id: id, etag: etag, uid: storedUID) }
            var stored = pending.write.card
            stored?.uid = pending.write.card?.uid.withoutNUL ?? ""
            do {
                try WriteRules.checkWrite(name: pending.write.name, card: stored, precondition: pending.precondition,
                                          existing: existing, uidHolder: stored == nil ? nil : holder)
            } catch {
                results.append(.failure(error))
                continue
            }
            seq += 1
            accepted.append(AcceptedWrite(write: pending.write, existingID: existing?.id, seq: seq))
            exclusion = exclusion?.merged(with: pending.exclusion) ?? pending.exclusion
            results.append(.success(PutResult(etag: pending.write.etag, created: existing == nil, seq: seq)))
        }
        guard !accepted.isEmpty else { return results }
        try await announce(exclusion ?? .nobody)
        var sql = SQLBuilder()
        Self.writeStatement(accepted, collectionID: collectionID, book: .locked(lastSeq: seq), now: now, to: &sql)
        let written = try await connection.rows(sql.query, as: BatchWriteSQL.self).first?.decode(Int64.self)
        // Every accepted write has its row, or the transaction is given up (then each write
        // goes on its own): a write must never be answered as done when it was not.
        guard written == Int64(accepted.count) else { throw BatchMismatch() }
        return results
    }

    /// Whether a batch's writes can be judged together: all cards, no two sharing a name or a
    /// UID (what each finds is then what it would find after the writes before it).
    static func canGoTogether(_ writes: [ResourceWrite]) -> Bool {
        // Conservative: Swift's String equality takes canonically equivalent names as equal,
        // which the database does not; such a batch merely goes one at a time.
        let names = Set(writes.map(\.name))
        let uids = writes.compactMap { $0.card?.uid.withoutNUL }
        // A file that is no card, written over a card, would free its UID for the writes after
        // it; it is rare (a plain collection holds no cards), and goes one at a time too.
        return names.count == writes.count && uids.count == writes.count && Set(uids).count == uids.count
    }

    /// A batch of new cards only (If-None-Match: *, how clients upload cards and how an import
    /// goes) in one statement that is its own transaction and takes the book's turn itself:
    /// no BEGIN, lock or COMMIT round trips, each of which the book's turn waited for (a batch
    /// of four new cards took 5.2 ms from start to answers with the machine 38 % idle). Nil
    /// when the batch cannot go this way (`putTogether` then judges it in a transaction).
    ///
    /// All or nothing, as the transaction is: a name or UID already taken fails the whole
    /// statement (the unique indexes, no `ON CONFLICT` here), and the batch then goes write by
    /// write, each judged. A connection lost while the statement ran leaves unknown whether it
    /// committed: every write is answered unavailable, never run again (`standalone`).
    func putNewTogether(_ batch: [WriteBatches.Pending], collectionID: Int64,
                        now: Double) async throws -> [Result<PutResult, any Error>]? {
        let writes = batch.map(\.write)
        guard batch.count > 1, batch.allSatisfy({ $0.precondition == .ifNoneMatchAny }), Self.canGoTogether(writes) else {
            return nil
        }
        var accepted: [AcceptedWrite] = []
        var exclusion = batch[0].exclusion
        for (offset, pending) in batch.enumerated() {
            var stored = pending.write.card
            stored?.uid = pending.write.card?.uid.withoutNUL ?? ""
            // Nothing is there to find: the statement's unique indexes judge the name and UID.
            do {
                try WriteRules.checkWrite(name: pending.write.name, card: stored, precondition: pending.precondition,
                                          existing: nil, uidHolder: nil)
            } catch {
                return nil
            }
            accepted.append(AcceptedWrite(write: pending.write, existingID: nil, seq: Int64(offset + 1)))
            exclusion = exclusion.merged(with: pending.exclusion)
        }
        writeBatches.countedTogether()
        var sql = SQLBuilder()
        Self.writeStatement(accepted, collectionID: collectionID,
                            book: .lockedInside(exclusion: exclusion == .nobody ? "" : exclusion.encoded), now: now, to: &sql)
        let query = sql.query
        let row = try await standalone { connection in
            try await connection.rows(query, as: BatchNewSQL.self).first?.decode((Int64, Int64?).self)
        }
        // The book is gone (no row to lock, nothing written): each write on its own says so.
        guard let (written, base) = row, let base else { throw BatchMismatch() }
        guard written == Int64(accepted.count) else {
            // Unreachable: without `ON CONFLICT` every write is a row or the statement failed.
            throw StoreError.unavailable("a batch of new cards wrote \(written) of \(accepted.count) and committed")
        }
        return accepted.map { .success(PutResult(etag: $0.write.etag, created: true, seq: base + $0.seq)) }
    }

    /// How a batch's statement has its book: locked by its transaction already, its seqs
    /// chosen; or locked by the statement itself, its seqs following the book's (`putNewTogether`).
    private enum BookTurn {
        case locked(lastSeq: Int64)
        /// The accepted writes' seqs are their places (1…); `exclusion` is what the trigger on
        /// `collections` tells the other processes ("" for nobody).
        case lockedInside(exclusion: String)
    }

    /// A write the rules accepted: an update of `existingID`, or a new resource.
    private struct AcceptedWrite {
        let write: ResourceWrite
        let existingID: Int64?
        let seq: Int64
    }

    /// The batch's statements did not find or write a row per write (a new card's name or UID
    /// was taken): answered by writing each on its own, judged.
    struct BatchMismatch: Error {}

    /// What each write finds, in the batch's order: its name's resource (id, ETag, UID) and the
    /// name of the resource holding its UID ("" for none: a UID is never empty).
    enum BatchTargetsSQL: PreparedSQL {
        static let sql = """
            SELECT e.id, e.etag, e.uid,
                   (SELECT name FROM resources WHERE collection_id = $1 AND md5(uid) = md5(w.uid) AND uid = w.uid LIMIT 1)
            FROM unnest($2::TEXT[], $3::TEXT[]) WITH ORDINALITY AS w(name, uid, k)
            LEFT JOIN resources e ON e.collection_id = $1 AND e.name = w.name
            ORDER BY w.k
            """
    }

    /// The batch's one statement, the same text for any batch (every value an array, a
    /// write's rows tied to it by its place `k`): prepared once per connection.
    enum BatchWriteSQL: AssembledSQL {}

    /// `BatchWriteSQL`'s form for new cards alone, with the book's turn inside (`putNewTogether`).
    enum BatchNewSQL: AssembledSQL {}

    /// Writes `accepted` as `insert` and `replace` write one card each, with the same rows:
    /// the resource, its index, member and list rows, its version's body and part references,
    /// the parts its old body held that the new one does not, and its change row; and makes
    /// `lastSeq` the book's. Answers the number of resources written.
    private static func writeStatement(_ accepted: [AcceptedWrite], collectionID: Int64, book: BookTurn, now: Double,
                                       to sql: inout SQLBuilder) {
        let collection = sql.bind(collectionID)
        let time = sql.bind(now)
        // Arrays hold no NULLs here: an optional is a value and a flag.
        func optional(_ values: [String?]) -> (String, String) {
            (sql.bind(values.map { $0 ?? "" }), sql.bind(values.map { $0 != nil }))
        }
        let writes = accepted.map(\.write)
        let ids = sql.bind(accepted.map { $0.existingID ?? 0 })
        let names = sql.bind(writes.map(\.name))
        let contentTypes = sql.bind(writes.map(\.contentType))
        let etags = sql.bind(writes.map(\.etag))
        let sizes = sql.bind(writes.map { Int64($0.data.count) })
        let seqs = sql.bind(accepted.map(\.seq))
        // Every write is a card (`putTogether`).
        let uids = sql.bind(writes.map { $0.card?.uid.withoutNUL ?? "" })
        let kinds = sql.bind(writes.map { $0.card?.kind ?? "" })
        let bodies = sql.bind(writes.map { ByteBuffer(bytes: $0.data) })
        let skeletons = sql.bind(writes.map { ByteBuffer(bytes: $0.versionBody.skeleton) })
        let (users, hasUser) = optional(writes.map { $0.author?.user })
        let credentials = sql.bind(writes.map { $0.author?.credentialID ?? 0 })
        let listings = writes.map { $0.card?.listing }
        let listed = sql.bind(listings.map { $0 != nil })
        let isGroup = sql.bind(writes.map { $0.card?.kind == "group" })
        let sortKeys = sql.bind(listings.map { $0?.sortKey.withoutNUL ?? "" })
        let displayNames = sql.bind(listings.map { $0?.displayName.withoutNUL ?? "" })
        let (organizations, hasOrganization) = optional(listings.map { $0?.organization?.withoutNUL })
        let (emails, hasEmail) = optional(listings.map { $0?.email?.withoutNUL })
        let (phones, hasPhone) = optional(listings.map { $0?.phone?.withoutNUL })
        let hasPhoto = sql.bind(listings.map { $0?.hasPhoto ?? false })
        let searchTexts = sql.bind(listings.map { $0?.searchText.withoutNUL ?? "" })

        // A write's rows of several kinds, flattened, each tagged with its write's place (1…).
        let entryRows = writes.enumerated().flatMap { k, write in
            write.entries.enumerated().map { (k: Int32(k + 1), position: Int32($0), entry: $1) }
        }
        let entryK = sql.bind(entryRows.map(\.k)), entryPositions = sql.bind(entryRows.map(\.position))
        let properties = sql.bind(entryRows.map(\.entry.property))
        let values = sql.bind(entryRows.map { $0.entry.value.withoutNUL })
        let asciiFolds = sql.bind(entryRows.map { $0.entry.asciiFold.withoutNUL })
        let unicodeFolds = sql.bind(entryRows.map { $0.entry.unicode.withoutNUL })
        let memberRows = writes.enumerated().flatMap { k, write in
            (write.card?.members ?? []).enumerated().map { (k: Int32(k + 1), position: Int32($0), uid: $1) }
        }
        let memberK = sql.bind(memberRows.map(\.k)), memberPositions = sql.bind(memberRows.map(\.position))
        let memberUIDs = sql.bind(memberRows.map { $0.uid.withoutNUL })
        let partRows = writes.enumerated().flatMap { k, write in write.versionBody.parts.map { (k: Int32(k + 1), part: $0) } }
        let partK = sql.bind(partRows.map(\.k)), partHashes = sql.bind(partRows.map(\.part.hash))
        let partStarts = sql.bind(partRows.map { Int64($0.part.start) })
        let partLengths = sql.bind(partRows.map { Int64($0.part.data.count) })
        // What differs with the book's turn inside: the seqs follow the book's, the lock is the
        // book's update (which every seq reads, so it comes first), and with no card there to
        // replace the update's parts go; a taken name or UID fails the statement.
        let seq: String, bookSQL: String, replacing: String, replaced: String, written: String, onConflict: String, answer: String
        switch book {
        case .locked(let lastSeq):
            seq = "w.seq"
            bookSQL = "book AS (UPDATE collections SET sync_seq = \(sql.bind(lastSeq)), modified = \(time) WHERE id = \(collection)),"
            replacing = """
                kept_parts AS (
                    INSERT INTO card_version_parts (hash, data)
                    SELECT DISTINCT ON (p.hash) p.hash, substring(old.data FROM (p.start + 1)::INTEGER FOR p.length::INTEGER)
                    FROM w JOIN resources old ON old.id = w.id JOIN card_version_part_refs p ON p.etag = old.etag
                    WHERE w.id <> 0 AND p.start IS NOT NULL AND old.etag IS DISTINCT FROM w.etag
                          AND NOT EXISTS (SELECT 1 FROM parts n WHERE n.k = w.k AND n.hash = p.hash)
                    ON CONFLICT (hash) DO NOTHING),
                updated AS (
                    UPDATE resources r SET content_type = w.content_type, etag = w.etag, size = w.size, modified = \(time),
                        seq = w.seq, uid = w.uid, kind = w.kind, data = w.data
                    FROM w WHERE w.id <> 0 AND r.id = w.id
                    RETURNING r.id, w.k),
                """
            replaced = """
                old_entries AS (
                    DELETE FROM card_index c WHERE c.resource_id = ANY(\(ids)::BIGINT[])
                    AND NOT EXISTS (SELECT 1 FROM new_entries e JOIN w ON w.k = e.k WHERE w.id = c.resource_id AND \(sameIndexEntry))),
                old_members AS (DELETE FROM group_members WHERE resource_id = ANY(\(ids)::BIGINT[])),
                old_listings AS (DELETE FROM card_listings WHERE resource_id IN (SELECT id FROM w WHERE id <> 0 AND NOT listed)),
                """
            written = """
                SELECT id, k, TRUE AS replaced FROM updated
                UNION ALL
                SELECT i.id, w.k, FALSE FROM inserted i JOIN w ON w.id = 0 AND w.name = i.name
                """
            onConflict = "ON CONFLICT DO NOTHING"
            answer = "SELECT count(*) FROM written"
        case .lockedInside(let exclusion):
            let count = sql.bind(Int64(accepted.count))
            seq = "(SELECT base FROM book) + w.seq"
            // The exclusion is set as the row is chosen, before its trigger runs.
            bookSQL = """
                book AS (
                    UPDATE collections SET sync_seq = sync_seq + \(count), modified = \(time)
                    WHERE id = \(collection) AND set_config('rolo.push_exclusion', \(sql.bind(exclusion)), true) IS NOT NULL
                    RETURNING sync_seq - \(count) AS base),
                """
            replacing = ""
            replaced = ""
            written = "SELECT i.id, w.k, FALSE AS replaced FROM inserted i JOIN w ON w.name = i.name"
            onConflict = ""
            answer = "SELECT count(*), (SELECT base FROM book) FROM written"
        }

        sql.append("""
            WITH w AS (
                SELECT * FROM unnest(\(ids)::BIGINT[], \(names)::TEXT[], \(contentTypes)::TEXT[], \(etags)::TEXT[],
                                     \(sizes)::BIGINT[], \(seqs)::BIGINT[], \(uids)::TEXT[], \(kinds)::TEXT[], \(bodies)::BYTEA[], \(skeletons)::BYTEA[],
                                     \(users)::TEXT[], \(hasUser)::BOOLEAN[], \(credentials)::BIGINT[],
                                     \(listed)::BOOLEAN[], \(isGroup)::BOOLEAN[], \(sortKeys)::TEXT[], \(displayNames)::TEXT[],
                                     \(organizations)::TEXT[], \(hasOrganization)::BOOLEAN[], \(emails)::TEXT[],
                                     \(hasEmail)::BOOLEAN[], \(phones)::TEXT[], \(hasPhone)::BOOLEAN[], \(hasPhoto)::BOOLEAN[],
                                     \(searchTexts)::TEXT[])
                    WITH ORDINALITY AS w(id, name, content_type, etag, size, seq, uid, kind, data, skeleton,
                                         actor_user, has_user, actor_credential, listed, is_group, sort_key, display_name,
                                         organization, has_organization, email, has_email, phone, has_phone, has_photo,
                                         search_text, k)),
            parts AS (
                SELECT * FROM unnest(\(partK)::INTEGER[], \(partHashes)::TEXT[], \(partStarts)::BIGINT[],
                                     \(partLengths)::BIGINT[]) AS p(k, hash, start, length)),
            \(bookSQL)
            \(replacing)
            inserted AS (
                INSERT INTO resources (collection_id, name, content_type, etag, size, modified, seq, uid, kind, data)
                SELECT \(collection), w.name, w.content_type, w.etag, w.size, \(time), \(seq), w.uid, w.kind, w.data
                FROM w WHERE w.id = 0 ORDER BY w.k
                \(onConflict)
                RETURNING id, name),
            written AS (
                \(written)),
            new_entries AS (
                SELECT * FROM unnest(\(entryK)::INTEGER[], \(entryPositions)::INTEGER[], \(properties)::TEXT[], \(values)::TEXT[],
                                     \(asciiFolds)::TEXT[], \(unicodeFolds)::TEXT[]) AS e(k, position, property, value, ascii, unicode)),
            \(replaced)
            version_bodies AS (
                INSERT INTO card_version_bodies (etag, data) SELECT DISTINCT ON (etag) etag, skeleton FROM w
                ON CONFLICT (etag) DO NOTHING),
            version_part_refs AS (
                INSERT INTO card_version_part_refs (etag, hash, start, length)
                SELECT DISTINCT ON (w.etag, p.hash) w.etag, p.hash, p.start, p.length FROM parts p JOIN w ON w.k = p.k
                ON CONFLICT (etag, hash) DO UPDATE SET start = excluded.start, length = excluded.length
                WHERE card_version_part_refs.start IS NULL),
            entries AS (
                INSERT INTO card_index (resource_id, position, collection_id, property, value, value_ascii, value_unicode)
                SELECT x.id, e.position, \(collection), e.property, e.value, e.ascii, e.unicode
                FROM new_entries e JOIN written x ON x.k = e.k
                -- Per row, and for a replaced card only: as an anti-join the planner may scan the
                -- whole index table for a batch of new cards.
                WHERE NOT x.replaced OR NOT EXISTS (SELECT 1 FROM card_index c WHERE c.resource_id = x.id AND \(sameIndexEntry))),
            members AS (
                INSERT INTO group_members (resource_id, position, collection_id, member_uid)
                SELECT x.id, m.position, \(collection), m.uid
                FROM unnest(\(memberK)::INTEGER[], \(memberPositions)::INTEGER[], \(memberUIDs)::TEXT[]) AS m(k, position, uid)
                JOIN written x ON x.k = m.k),
            listings AS (
                INSERT INTO card_listings (collection_id, is_group, sort_key, name, resource_id, display_name, organization,
                                           email, phone, has_photo, search_text)
                SELECT \(collection), w.is_group, w.sort_key, w.name, x.id, w.display_name,
                       CASE WHEN w.has_organization THEN w.organization END, CASE WHEN w.has_email THEN w.email END,
                       CASE WHEN w.has_phone THEN w.phone END, w.has_photo, w.search_text
                FROM w JOIN written x ON x.k = w.k WHERE w.listed
                \(listingConflictSQL)),
            change_rows AS (
                INSERT INTO changes (collection_id, seq, name, deleted, at, actor_user, actor_credential)
                SELECT \(collection), \(seq), w.name, FALSE, \(time), CASE WHEN w.has_user THEN w.actor_user END,
                       CASE WHEN w.has_user THEN w.actor_credential END
                FROM w JOIN written x ON x.k = w.k ORDER BY w.k
                ON CONFLICT (collection_id, name) DO UPDATE SET seq = excluded.seq, deleted = excluded.deleted, at = excluded.at,
                    actor_user = excluded.actor_user, actor_credential = excluded.actor_credential)
            \(answer)
            """)
    }
}
