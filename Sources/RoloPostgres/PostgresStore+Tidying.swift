import Foundation
import PostgresNIO
import RoloStore
import Synchronization

/// The tidying PostgreSQL's autovacuum would do, done as soon as a burst of writes ends.
///
/// A card just written leaves three things that slow the next reads of its book until
/// autovacuum's turn, which comes up to a minute later on a small database
/// (`autovacuum_naptime`) and, for inserts, only once a fifth of the table is new on a big one:
/// - its pages are not yet marked all-visible, so listings read every card's row besides
///   the covering index (`v10-listing-covering-index`), and the first reader of each row
///   also writes its hint bits;
/// - its trigrams wait in the GIN indexes' pending lists, which every substring query
///   scans whole (fastupdate; a pending list is merged only when it passes 4 MB);
/// - the planner's statistics may still describe the book as it was.
/// After a client uploads 10,000 cards through PUT, carddav-bench's queries on PostgreSQL
/// took 1.5-2x as long as after a VACUUM and a merge of the pending lists, which took 0.4 s
/// (Docs/performance.md, "The tidying after a burst of writes").
///
/// So once a process has written `threshold` cards and writes pause (`quiet`, or at the
/// latest `longestWait` into a steady stream), it runs one `VACUUM (INDEX_CLEANUP OFF)` of
/// the tables a write touches (`tables`), which visits only pages not yet all-visible, and merges
/// the GIN pending lists; it adds ANALYZE when the writes are a tenth of the cards or
/// more, autovacuum's own measure. Indexes' clean-up of dead entries stays autovacuum's:
/// in a big database it reads each index whole. Only speed depends on any of it.
///
/// A stall inside a burst (a loaded machine, a slow client) looks like its end: the tidying
/// runs, and the cards written after it would wait for autovacuum, being fewer than
/// `threshold`. So writes within `tail` of a tidying's end are that burst's tail and get a
/// tidying of their own once they pause, once: a steady trickle of writes is not vacuumed
/// after each one. (CI saw a burst's last card left in a pending list.)
final class BurstTidying: Sendable {
    /// Writes pausing this long end a burst.
    static let quiet = Duration.milliseconds(250)
    /// A steady stream of writes is tidied at least this often.
    static let longestWait = Duration.seconds(5)
    /// Writes this soon after a tidying ended are its burst's tail (tidied once more).
    static let tail = Duration.seconds(2)
    /// Writes of at least this share of the cards also refresh the planner's statistics.
    static let analyzeShare = 0.1
    /// Every table a PUT writes: those its book's reads use, and the history's and the
    /// book's row, which autovacuum would otherwise visit within the minute, in the middle
    /// of whatever the server does next.
    static let tables = ["resources", "card_index", "card_listings", "group_members", "changes", "collections",
                         "card_versions", "card_version_bodies", "card_version_parts", "card_version_part_refs"]

    private struct State {
        var written = 0
        var lastWrite = ContinuousClock.now
        /// When the last tidying loop ended after a burst of `threshold` cards or more: until
        /// `tail` after it, any write starts one more.
        var tidiedAt: ContinuousClock.Instant?
        /// The running tidying is a tail's: it arms no further tail.
        var tailing = false
        var task: Task<Void, Never>?
        var closed = false
    }
    private let state = Mutex(State())
    /// Cards written by this process before a tidying starts; 0 for never.
    let threshold: Int

    init(threshold: Int) {
        self.threshold = threshold
    }

    /// Counts written cards; starts `tidy` (the loop that waits for the pause and does the
    /// work, `PostgresStore.tidyingLoop`) when there are enough and none is running.
    func wrote(_ cards: Int, tidy: @escaping @Sendable () async -> Void) {
        state.withLock { state in
            state.written += cards
            state.lastWrite = .now
            let tail = state.tidiedAt.map { state.lastWrite - $0 < BurstTidying.tail } ?? false
            guard threshold > 0, state.written >= threshold || tail, state.task == nil, !state.closed else { return }
            state.tailing = state.written < threshold
            state.tidiedAt = nil
            state.task = Task { await tidy() }
        }
    }

    /// When the last write was.
    var lastWrite: ContinuousClock.Instant { state.withLock { $0.lastWrite } }

    /// A tidying is waiting for its pause or under way (its loop ends after its last merge).
    var isRunning: Bool { state.withLock { $0.task != nil } }

    /// The cards written since the last tidying, which the one starting now covers.
    func take() -> Int {
        state.withLock { state in
            defer { state.written = 0 }
            return state.written
        }
    }

    /// After a tidying: whether cards were written meanwhile (the loop goes on, and the burst
    /// ends with a tidying of them however few), or not (the loop ends, and the next write
    /// past the threshold starts one).
    func another() -> Bool {
        state.withLock { state in
            if !state.closed && state.written > 0 { return true }
            state.task = nil
            state.tidiedAt = state.tailing ? nil : .now
            state.tailing = false
            return false
        }
    }

    /// No tidying starts from now on; the running one, if any, to wait for.
    func close() -> Task<Void, Never>? {
        state.withLock { state in
            state.closed = true
            return state.task
        }
    }
}

extension PostgresStore {
    /// Counts cards a PUT wrote, for `BurstTidying`.
    func wroteCards(_ cards: Int) {
        tidying.wrote(cards) { [weak self] in await self?.tidyingLoop() }
    }

    /// Waits for the writes to pause, tidies, and again while writes keep coming.
    private func tidyingLoop() async {
        repeat {
            let began = ContinuousClock.now
            while !Task.isCancelled {
                try? await Task.sleep(for: BurstTidying.quiet)
                let now = ContinuousClock.now
                if now - tidying.lastWrite >= BurstTidying.quiet || now - began >= BurstTidying.longestWait { break }
            }
            if Task.isCancelled { return }
            await tidy(afterWriting: tidying.take())
        } while tidying.another()
    }

    /// One VACUUM of the tables a card's write touches, ANALYZE with it when `cards` are a
    /// tenth of the database's or more, and the GIN indexes' pending lists merged. Best
    /// effort: a failure (or the statement timeout, on tables with much else to visit) is
    /// logged and left to autovacuum.
    func tidy(afterWriting cards: Int) async {
        do {
            try await autocommit { connection in
                let estimate = try await connection.first(CardsEstimateSQL.self)?.decode(Int64.self) ?? 0
                let analyze = Double(cards) >= BurstTidying.analyzeShare * Double(estimate)
                try await connection.execute(PostgresQuery(unsafeSQL: """
                    VACUUM (\(analyze ? "ANALYZE, " : "")INDEX_CLEANUP OFF) \(BurstTidying.tables.joined(separator: ", "))
                    """))
                // The trigram indexes (when pg_trgm is there); VACUUM without index clean-up leaves them.
                _ = try await connection.rows("""
                    SELECT gin_clean_pending_list(i.indexrelid::regclass) FROM pg_index i
                    JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am a ON a.oid = c.relam
                    WHERE a.amname = 'gin' AND c.relnamespace = current_schema()::regnamespace
                    """)
            }
        } catch {
            logger.notice("the tidying after \(cards) written cards did not finish; autovacuum will",
                          metadata: ["error": "\(Self.describe(error))"])
        }
    }
}
