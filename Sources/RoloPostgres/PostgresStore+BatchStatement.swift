import Foundation
import PostgresNIO
import RoloStore

/// A batch of PUTs to one book (`WriteBatches`) judged together and written by one statement
/// that is its own transaction and takes the book's turn itself. Each card had taken a
/// statement of its own (two for an update: its look-up and its write), a round trip each
/// inside the book's turn; then a transaction of BEGIN, the book's lock, one look-up, one
/// write and COMMIT, whose round trips the turn still waited for (a batch of four new cards
/// took 5.2 ms from start to answers with the machine 38 % idle). Now a batch is its look-up
/// (none for new cards only, If-None-Match: *, how clients upload cards and an import goes;
/// none either for updates whose requests read their cards with the sign-in,
/// `targetsReadAhead`, or read nothing at all, `BatchUnreadSQL`, how a client edits cards)
/// and its write. The cluster's time a card
/// barely moved with any of it (about 0.7 ms): that is the rows (index, list row, history
/// trigger), so an update also rewrites only the index rows that changed
/// (`sameIndexEntry`) and a list row only when it did (`listingConflictSQL`).
/// Docs/performance.md has the figures (issue 34).
///
/// The look-up runs before the book's turn (or was made by the request, earlier still), so
/// the write checks that each card is as the look-up found it: an update's card still has
/// the seq it had (every write of a card gives it a new one, so a card written and written
/// back to the same bytes is caught too, which its ETag would not catch), and a new card's
/// name and UID are still free (the unique indexes). One that is not fails the whole
/// statement (`rolo_all_written`, the unique indexes), and the batch then goes write by
/// write in a transaction holding the book's row, each write judged there
/// (`PostgresStore.put`). So whatever the statement writes, it writes on the state the rules
/// judged.
///
/// Judged together only when every write is a card and no two share a name or a UID: then what
/// each write finds (its name's resource, its UID's holder) is what it would find after the
/// writes before it, since a PUT never deletes and never changes a card's UID in place
/// (`WriteRules`). Otherwise the batch goes one write at a time.
extension PostgresStore {
    /// Each write's answer, in order; nil when the batch must go one write at a time (a write
    /// is no card, or two share a name or a UID). Writes the accepted ones, the seqs after
    /// the book's as the statement finds it, the last of them made the book's. Throws, and
    /// nothing was written, when the statement failed: `BatchMismatch` or a server error when
    /// a card was not as the look-up found it (the batch then goes write by write),
    /// `StoreError.unavailable` when the database could not be reached or the connection
    /// ended while the statement ran (whether it committed nobody can tell: it is not run
    /// again, `standalone`).
    func putTogether(_ batch: [WriteBatches.Pending], collectionID: Int64, now: Double,
                     on held: BookConnection? = nil) async throws -> [Result<PutResult, any Error>]? {
        let writes = batch.map(\.write)
        guard Self.canGoTogether(writes) else { return nil }
        if batch.count > 1 { writeBatches.countedTogether() }
        let targets: [BatchTarget]
        // Whether the targets are what the requests knew (none read here): an update by ETag
        // found nothing then, and is judged by the statement (`Pending.byETag`).
        var readHere = false
        if batch.allSatisfy({ $0.precondition == .ifNoneMatchAny }) {
            // New cards only: nothing to find; a name or UID taken fails the statement.
            targets = Array(repeating: (nil, nil, nil, nil, nil), count: writes.count)
        } else if let read = Self.targetsReadAhead(batch) {
            targets = read
        } else {
            let names = writes.map(\.name), uids = writes.map { $0.card?.uid.withoutNUL ?? "" }
            let found = try await autocommit(on: held) { connection in
                try await connection.rows(BatchTargetsSQL.self, collectionID, names, uids)
            }
            guard found.count == writes.count else { throw BatchMismatch() }
            targets = try found.map { try $0.decode(BatchTarget.self) }
            readHere = true
        }
        var results: [Result<PutResult, any Error>] = []
        // Each accepted write with its slot in `results`.
        var accepted: [(write: AcceptedWrite, slot: Int)] = []
        var exclusion: PushExclusion?
        for (pending, (id, etag, storedUID, seq, holder)) in zip(batch, targets) {
            if let byETag = pending.byETag, !readHere {
                accepted.append((AcceptedWrite(write: pending.write, existingID: nil, foundSeq: 0, place: Int64(accepted.count + 1),
                                               byETag: byETag), results.count))
                results.append(.failure(BatchMismatch())) // the answer once written
                exclusion = exclusion?.merged(with: pending.exclusion) ?? pending.exclusion
                continue
            }
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
            accepted.append((AcceptedWrite(write: pending.write, existingID: existing?.id, foundSeq: seq ?? 0,
                                           place: Int64(accepted.count + 1)), results.count))
            results.append(.failure(BatchMismatch())) // the answer once written
            exclusion = exclusion?.merged(with: pending.exclusion) ?? pending.exclusion
        }
        guard !accepted.isEmpty else { return results }
        let encoded = exclusion.map { $0 == .nobody ? "" : $0.encoded } ?? ""
        // Which of the three forms: the text and the prepared statement must agree.
        let unread = accepted.filter { $0.write.byETag != nil }.count
        let replaces = unread > 0 || accepted.contains { $0.write.existingID != nil }
        var sql = replaces ? SQLBuilder.opaque() : SQLBuilder()
        Self.writeStatement(accepted.map(\.write), collectionID: collectionID, replaces: replaces, unread: unread > 0,
                            exclusion: encoded, now: now, to: &sql)
        let query = sql.query
        let row = try await standalone(on: held) { connection in
            try await (unread > 0 ? connection.rows(query, as: BatchUnreadSQL.self)
                : replaces ? connection.rows(query, as: BatchWriteSQL.self) : connection.rows(query, as: BatchNewSQL.self))
                .first?.decode((Int64, Int64?).self)
        }
        // No book row to take (the book is gone, nothing written): each write on its own says so.
        guard let (written, base) = row, let base, written == Int64(accepted.count) else { throw BatchMismatch() }
        for (write, slot) in accepted {
            results[slot] = .success(PutResult(etag: write.write.etag, created: write.existingID == nil && write.byETag == nil,
                                               seq: base + write.place))
        }
        return results
    }

    /// What a write finds: its name's resource (id, ETag, UID, seq; all nil for none) and the
    /// name of the resource holding its UID (`BatchTargetsSQL`'s row).
    typealias BatchTarget = (Int64?, String?, String?, Int64?, String?)

    /// What each write finds, from what the requests' lookups read (`Pending.found`), when
    /// that is all the look-up would read: every write is a new card (If-None-Match: *) or
    /// an update whose lookup found its card and keeps the card's UID, the UID's holder then
    /// being the card itself. Nil when any write needs the look-up. What a lookup read is a
    /// moment older than the look-up would be, which the statement's check of each card's
    /// seq covers as it covers the look-up's own age.
    static func targetsReadAhead(_ batch: [WriteBatches.Pending]) -> [BatchTarget]? {
        var targets: [BatchTarget] = []
        targets.reserveCapacity(batch.count)
        for pending in batch {
            // New cards and updates judged by the statement (`Pending.byETag`) find nothing.
            if pending.precondition == .ifNoneMatchAny || pending.byETag != nil {
                targets.append((nil, nil, nil, nil, nil))
                continue
            }
            // Bytes, as `WriteRules` compares UIDs.
            guard let found = pending.found, let uid = found.uid, let card = pending.write.card,
                  uid.isExactly(card.uid.withoutNUL) else { return nil }
            targets.append((found.id, found.etag, uid, found.seq, pending.write.name))
        }
        return targets
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

    /// A write the rules accepted: an update of `existingID`, which the look-up found at
    /// `foundSeq`, or a new resource; or an update of the card whose ETag is `byETag`, found
    /// and judged by the statement. Its seq is the book's before the statement plus `place`.
    private struct AcceptedWrite {
        let write: ResourceWrite
        let existingID: Int64?
        let foundSeq: Int64
        let place: Int64
        var byETag: String? = nil
    }

    /// The batch's statement did not find a card as the look-up left it, or its book: answered
    /// by writing each on its own, judged.
    struct BatchMismatch: Error {}

    /// What each write finds, in the batch's order: its name's resource (id, ETag, UID, seq)
    /// and the name of the resource holding its UID ("" for none: a UID is never empty).
    enum BatchTargetsSQL: PreparedSQL {
        static let sql = """
            SELECT e.id, e.etag, e.uid, e.seq,
                   (SELECT name FROM resources WHERE collection_id = $1 AND md5(uid) = md5(w.uid) AND uid = w.uid LIMIT 1)
            FROM unnest($2::TEXT[], $3::TEXT[]) WITH ORDINALITY AS w(name, uid, k)
            LEFT JOIN resources e ON e.collection_id = $1 AND e.name = w.name
            ORDER BY w.k
            """
    }

    /// The batch's one statement, the same text for any batch (every value an array, a
    /// write's rows tied to it by its place `k`): prepared once per connection.
    ///
    /// Two forms, one for batches that replace cards and one for new cards alone, which reads
    /// none of the tables an update reads. A prepared statement keeps the plan it made at its
    /// sixth run until the planner's statistics of its tables change (an ANALYZE): with one
    /// form, the plan made as an import began, the tables a few pages, scanned `resources`,
    /// `card_index` and `card_listings` whole in every update after it (14 ms a batch where
    /// it takes 1-2, until the tidying's ANALYZE, `BurstTidying`). The transaction this
    /// replaced set `enable_seqscan` off first; a statement that is its own transaction
    /// cannot, so the update form is planned when the first updates come.
    ///
    /// The update form's values are hidden from the planner (`SQLBuilder.opaque`). Seeing
    /// them, PostgreSQL judged its plans for each batch's values cheaper than the generic
    /// plan and planned the statement afresh for every batch, which took as long as running
    /// it (`pg_stat_statements` in `put-import --if-match`: 0.93 ms of planning and 0.99 ms
    /// of execution a batch). The new-cards form was already planned once.
    enum BatchWriteSQL: AssembledSQL {}

    /// `BatchWriteSQL`'s form for batches of new cards alone.
    enum BatchNewSQL: AssembledSQL {}

    /// `BatchWriteSQL`'s form for batches with an update whose request read nothing of its
    /// card (`AcceptedWrite.byETag`): the statement finds each such card by name, in its own
    /// snapshot, and writes it only when it has that ETag and keeps its UID (a card whose
    /// UID changes is judged write by write, as any refused statement's). Its seq as found
    /// is then what the update checks, as for a card the look-up found.
    enum BatchUnreadSQL: AssembledSQL {}

    /// Writes `accepted` as `insert` and `replace` write one card each, with the same rows:
    /// the resource, its index, member and list rows, its version's body and part references,
    /// the parts its old body held that the new one does not, and its change row; each its
    /// seq after the book's, the last made the book's, which the statement takes first (every
    /// seq reads it), its notification carrying `exclusion` ("" for nobody). Answers the
    /// number of resources written and the book's seq before, or fails when a card is not as
    /// the look-up found it.
    private static func writeStatement(_ accepted: [AcceptedWrite], collectionID: Int64, replaces: Bool, unread: Bool,
                                       exclusion: String, now: Double, to sql: inout SQLBuilder) {
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
        let places = sql.bind(accepted.map(\.place))
        let foundSeqs = sql.bind(accepted.map(\.foundSeq))
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
        let count = sql.bind(Int64(accepted.count))
        // The replaced cards' keys: the arrays' own, or, when the statement finds some
        // (`unread`), read from `w` once (`BatchUnreadSQL`).
        let replacedIDs = unread ? "ARRAY(SELECT id FROM w WHERE id > 0)" : "\(ids)::BIGINT[]"
        // Every seq is the book's before plus the write's place: the book's row is the first
        // thing the statement takes, and its lock is the book's turn.
        let seq = "(SELECT base FROM book) + w.place"
        // An update's parts (when `replaces`: some write has a card to replace): its old body's
        // parts the history keeps, its row, its old rows.
        //
        // The replaced bodies' ETags are found first (`replaced_etags`, materialized) and their
        // parts by ETag after: a plan the planner may not reorder. Left to itself, on a small book
        // whose statistics counted few parts, it paired every write with every part first (an
        // anti join it took for one row) and read the old card once per pair: at 1,000 cards,
        // 0.72 ms of a 1.36 ms batch of two updates (`auto_explain`, timed), growing with the
        // history until an ANALYZE.
        let replacing = !replaces ? "" : """
            replaced_etags AS MATERIALIZED (
                SELECT w.k, old.id, old.etag FROM w JOIN resources old ON old.id = w.id
                WHERE w.id <> 0 AND old.etag IS DISTINCT FROM w.etag),
            kept_parts AS (
                INSERT INTO card_version_parts (hash, data)
                SELECT DISTINCT ON (p.hash) p.hash, substring(old.data FROM (p.start + 1)::INTEGER FOR p.length::INTEGER)
                FROM replaced_etags o JOIN card_version_part_refs p ON p.etag = o.etag JOIN resources old ON old.id = o.id
                WHERE p.start IS NOT NULL AND NOT EXISTS (SELECT 1 FROM parts n WHERE n.k = o.k AND n.hash = p.hash)
                ON CONFLICT (hash) DO NOTHING),
            -- Only the card as the look-up found it (its seq): a write since fails the statement.
            updated AS (
                UPDATE resources r SET content_type = w.content_type, etag = w.etag, size = w.size, modified = \(time),
                    seq = \(seq), uid = w.uid, kind = w.kind, data = w.data
                FROM w WHERE w.id <> 0 AND r.id = w.id AND r.seq = w.found_seq
                RETURNING r.id, w.k),
            """
        let written = replaces ? """
            SELECT id, k, TRUE AS replaced FROM updated
            UNION ALL
            SELECT i.id, w.k, FALSE FROM inserted i JOIN w ON w.id = 0 AND w.name = i.name
            """ : "SELECT i.id, w.k, FALSE AS replaced FROM inserted i JOIN w ON w.name = i.name"
        let replaced = !replaces ? "" : """
            old_members AS (DELETE FROM group_members WHERE resource_id = ANY(\(replacedIDs))),
            old_listings AS (DELETE FROM card_listings WHERE resource_id IN (SELECT id FROM w WHERE id <> 0 AND NOT listed)),
            -- The new entries a replaced card has already: its rows read by their card's key
            -- first (OFFSET 0 keeps the planner from reaching into the subquery), then
            -- compared. As a NOT EXISTS beside "or the card is new" the planner hashed all of
            -- card_index for every batch, and as a join it went from each new entry through
            -- the index on values (72 ms a batch), once no transaction set enable_seqscan off.
            -- Decided once here, for the rows deleted and those written (a position is one
            -- row of a card).
            kept_entries AS (
                SELECT w.id, e.k, e.position
                FROM (SELECT * FROM card_index WHERE resource_id = ANY(\(replacedIDs)) OFFSET 0) c
                JOIN w ON w.id = c.resource_id JOIN new_entries e ON e.k = w.k AND \(sameIndexEntry)),
            -- A replaced card's rows but those it keeps.
            old_entries AS (
                DELETE FROM card_index c WHERE c.resource_id = ANY(\(replacedIDs))
                AND NOT EXISTS (SELECT 1 FROM kept_entries kept WHERE kept.id = c.resource_id AND kept.position = c.position)),
            """
        // With updates found here, the arrays' keys and seqs are the requests' (`given_`), and
        // `w` adds each card's as the statement's snapshot has it: a probe of the name's
        // unique index (`LIMIT 1`, as in `StampAndMemberSQL`), the row kept only with the ETag
        // the If-Match names and the UID the card keeps; -1 for none, which no row has, so
        // that the count of written cards comes short and the batch goes write by write.
        let arrays = unread ? "q" : "w"
        let byETags = unread ? ", \(sql.bind(accepted.map { $0.byETag ?? "" }))::TEXT[]" : ""
        let withs = unread ? """
            w AS (
                SELECT q.*,
                       CASE WHEN q.by_etag = '' THEN q.given_id ELSE COALESCE(e.id, -1) END AS id,
                       CASE WHEN q.by_etag = '' THEN q.given_seq ELSE COALESCE(e.seq, -1) END AS found_seq
                FROM q LEFT JOIN LATERAL (
                    SELECT r.id, r.seq FROM resources r
                    WHERE q.by_etag <> '' AND r.collection_id = \(collection) AND r.name = q.name AND r.etag = q.by_etag
                          AND r.uid = q.uid LIMIT 1) e ON true),
            """ : ""
        sql.append("""
            WITH \(arrays) AS (
                SELECT * FROM unnest(\(ids)::BIGINT[], \(names)::TEXT[], \(contentTypes)::TEXT[], \(etags)::TEXT[],
                                     \(sizes)::BIGINT[], \(places)::BIGINT[], \(foundSeqs)::BIGINT[], \(uids)::TEXT[], \(kinds)::TEXT[],
                                     \(bodies)::BYTEA[], \(skeletons)::BYTEA[],
                                     \(users)::TEXT[], \(hasUser)::BOOLEAN[], \(credentials)::BIGINT[],
                                     \(listed)::BOOLEAN[], \(isGroup)::BOOLEAN[], \(sortKeys)::TEXT[], \(displayNames)::TEXT[],
                                     \(organizations)::TEXT[], \(hasOrganization)::BOOLEAN[], \(emails)::TEXT[],
                                     \(hasEmail)::BOOLEAN[], \(phones)::TEXT[], \(hasPhone)::BOOLEAN[], \(hasPhoto)::BOOLEAN[],
                                     \(searchTexts)::TEXT[]\(byETags))
                    WITH ORDINALITY AS \(arrays)(\(unread ? "given_id" : "id"), name, content_type, etag, size, place,
                                         \(unread ? "given_seq" : "found_seq"), uid, kind, data, skeleton,
                                         actor_user, has_user, actor_credential, listed, is_group, sort_key, display_name,
                                         organization, has_organization, email, has_email, phone, has_phone, has_photo,
                                         search_text, \(unread ? "by_etag, " : "")k)),
            \(withs)
            parts AS (
                SELECT * FROM unnest(\(partK)::INTEGER[], \(partHashes)::TEXT[], \(partStarts)::BIGINT[],
                                     \(partLengths)::BIGINT[]) AS p(k, hash, start, length)),
            -- The book's turn. The exclusion is set as the row is chosen, before its trigger runs.
            book AS (
                UPDATE collections SET sync_seq = sync_seq + \(count), modified = \(time)
                WHERE id = \(collection) AND set_config('rolo.push_exclusion', \(sql.bind(exclusion)), true) IS NOT NULL
                RETURNING sync_seq - \(count) AS base),
            \(replacing)
            -- No ON CONFLICT: a name or UID taken since the look-up fails the statement.
            inserted AS (
                INSERT INTO resources (collection_id, name, content_type, etag, size, modified, seq, uid, kind, data)
                SELECT \(collection), w.name, w.content_type, w.etag, w.size, \(time), \(seq), w.uid, w.kind, w.data
                FROM w WHERE w.id = 0 ORDER BY w.k
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
                \(replaces ? "WHERE NOT EXISTS (SELECT 1 FROM kept_entries kept WHERE kept.k = e.k AND kept.position = e.position)" : "")),
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
                INSERT INTO changes (collection_id, seq, name, deleted, at, actor_user, actor_credential, etag, content_type)
                SELECT \(collection), \(seq), w.name, FALSE, \(time), CASE WHEN w.has_user THEN w.actor_user END,
                       CASE WHEN w.has_user THEN w.actor_credential END, w.etag, w.content_type
                FROM w JOIN written x ON x.k = w.k ORDER BY w.k
                ON CONFLICT (collection_id, name) DO UPDATE SET \(changeUpdateSQL))
            SELECT rolo_all_written(count(*), \(count)), (SELECT base FROM book) FROM written
            """)
    }
}
