import Foundation
import RoloStore
import GRDB
import GRDBSQLite

/// A read-only connection that holds a read transaction on the newest snapshot between
/// writes. Every read transaction in WAL mode locks a "read mark" in the shared-memory
/// index; the process takes the file lock (`fcntl`) for it only when no other connection of
/// the process holds it, and does so inside SQLite's shared-memory mutex. With two event
/// loops each reading for every GET, that lock went on and off 1.75 times per GET and the
/// loops queued on the mutex: holding the newest read mark here took GET from 33-34k to
/// 40-47k req/s (Docs/performance.md, "The read mark held between writes").
///
/// Readers still take their own snapshot, so what they see never depends on the anchor.
/// What the anchor could hold up is the log: a writer cannot start the log over while
/// some reader holds a read mark, and a TRUNCATE checkpoint waits for readers. So the
/// writer lets go before each batch, checkpoint or merge and takes the newest snapshot
/// again after it (`GroupCommit`, `SQLiteStore.checkpoint()`, `importCards`). Writes that
/// go through none of them (collections, users, COPY and MOVE) leave it on an older
/// snapshot until the next batch: readers then lock a read mark of their own as before.
final class ReadAnchor: @unchecked Sendable {
    /// Guards `handle` and `holding`.
    private let lock = NSLock()
    private var handle: OpaquePointer?
    private var holding = false

    init(path: String) throws {
        var handle: OpaquePointer?
        let code = sqlite3_open_v2(path, &handle, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nil)
        self.handle = handle
        guard code == SQLITE_OK, handle != nil else {
            sqlite3_close_v2(handle)
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: "cannot open the read anchor")
        }
        // It reads one schema page per snapshot.
        sqlite3_exec(handle, "PRAGMA cache_size = -64", nil, nil, nil)
    }

    deinit { close() }

    /// True while a read transaction is held.
    var isHolding: Bool { lock.withLock { holding } }

    /// Ends the held read transaction, if any, and starts one on the newest snapshot.
    func holdNewest() {
        lock.withLock {
            guard let handle else { return }
            startNewest(handle)
        }
    }

    /// Moves a held read transaction to the newest snapshot; nothing when none is held
    /// (the writer let go of it for its own commit and takes it again after).
    func followNewest() {
        lock.withLock {
            guard let handle, holding else { return }
            startNewest(handle)
        }
    }

    /// Ends the held transaction, if any, and holds one on the newest snapshot; under `lock`.
    private func startNewest(_ handle: OpaquePointer) {
        if holding { sqlite3_exec(handle, "COMMIT", nil, nil, nil) }
        // BEGIN defers the read until a statement reads: the SELECT takes the snapshot.
        holding = sqlite3_exec(handle, "BEGIN; SELECT 1 FROM sqlite_schema LIMIT 1", nil, nil, nil) == SQLITE_OK
        if !holding { sqlite3_exec(handle, "ROLLBACK", nil, nil, nil) }
    }

    /// Ends the held read transaction, if any.
    func release() {
        lock.withLock {
            guard let handle, holding else { return }
            sqlite3_exec(handle, "COMMIT", nil, nil, nil)
            holding = false
        }
    }

    /// Ends the transaction and closes the connection; later calls do nothing.
    func close() {
        lock.withLock {
            if let handle {
                if holding { sqlite3_exec(handle, "COMMIT", nil, nil, nil) }
                sqlite3_close_v2(handle)
            }
            handle = nil
            holding = false
        }
    }
}

/// The writer connection's WAL hook, which SQLite calls after each of its commits: the
/// anchor follows every commit, not only those of `GroupCommit`, `checkpoint()` and
/// `importCards`. Left on the snapshot before a write made elsewhere (the access history's
/// counts, a user's settings, the hourly pruning), the anchor no longer held the readers'
/// read mark, and each of a GET's two reads took and gave back a file lock of its own:
/// 3.7 `fcntl` calls a GET, and 43 µs of CPU a GET where the older build took 26.5
/// (Docs/performance.md, "A GET on SQLite: the read mark after any write").
///
/// A WAL hook replaces SQLite's automatic checkpoint (`wal_autocheckpoint` is one), so this
/// one checkpoints as that did: PASSIVE, once the log holds `checkpointPages` pages.
final class WriterCommits: @unchecked Sendable {
    let anchor: ReadAnchor
    let checkpointPages: Int32

    init(anchor: ReadAnchor, checkpointPages: Int32) {
        self.anchor = anchor
        self.checkpointPages = checkpointPages
    }

    /// Sets the hook on the writer connection `db`; `self` must outlive it (the store holds it).
    func install(on db: OpaquePointer) {
        sqlite3_wal_hook(db, { context, db, name, pages in
            let commits = Unmanaged<WriterCommits>.fromOpaque(context!).takeUnretainedValue()
            // First the anchor: a checkpoint copies no frame a reader's snapshot still lacks.
            commits.anchor.followNewest()
            if commits.checkpointPages > 0, pages >= commits.checkpointPages { sqlite3_wal_checkpoint(db, name) }
            return SQLITE_OK
        }, Unmanaged.passUnretained(self).toOpaque())
    }
}
