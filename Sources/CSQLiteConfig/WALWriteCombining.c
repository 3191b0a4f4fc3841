// A VFS over SQLite's default one that writes a transaction's WAL frames with one pwrite
// instead of two each (issue 34).
//
// SQLite appends each frame to the WAL as two writes, its 24-byte header and then its page,
// so a commit of 45 frames made 90 `pwrite64` calls, and each call's trip through ext4's
// buffered write path costs more than its bytes: measured on this machine, 66 µs of CPU for
// the 90 calls against 32 µs for one call with the same bytes. Here the WAL file keeps writes
// that follow on from each other in memory and writes them out as one:
//
// - when the frame that commits the transaction is written (a frame header whose "database
//   size after commit" field is not zero, then its page): before the write returns, so
//   before SQLite syncs the WAL or publishes the commit in the wal-index, and a reader never
//   finds a frame that is not in the file;
// - before anything else touches the file: a write elsewhere, a read, a sync, a truncate, its
//   size, a file control, a close;
// - when the connection publishes a commit in the wal-index (the shm barrier SQLite calls
//   first), whatever `synchronous` is;
// - when the connection gives up the WAL's write lock (the database file's shm lock slot 0):
//   frames of a transaction that rolled back after spilling pages are written then, still
//   under the lock, as SQLite would have written them at once. After that, another
//   connection may write at those offsets, so nothing is kept past the lock.
// - when 1 MiB is waiting (a large transaction's spilled pages).
//
// A crash while frames wait loses only frames no commit frame follows yet, which recovery
// ignores anyway: what is on disk at each sync is what SQLite wrote before it.
//
// Only the database and WAL files go through this VFS's methods; journals and temporary
// files are the default VFS's files as they are.

#include "CSQLiteConfig.h"
#include <pthread.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define ROLO_WAL_BUFFER_LIMIT (1 << 20)
#define ROLO_WAL_FRAME_HEADER 24
/// The longest write the default VFS takes whole (`seekAndWriteFd` keeps 17 bits of it).
#define ROLO_WAL_WRITE_LIMIT 0x1ffff

/// What both kinds of file start with: SQLite's header, then the default VFS's own file
/// (which sits after ours in the slot SQLite allocates), so one set of forwarding methods
/// serves both.
typedef struct {
    sqlite3_file base;
    sqlite3_file *real;
} RoloFile;

/// A WAL file: writes waiting in `pending`.
typedef struct RoloWALFile RoloWALFile;
struct RoloWALFile {
    RoloFile file;
    /// The name of the connection's database file, as SQLite gave it to that file's xOpen:
    /// the same pointer (`sqlite3_filename_database` walks back to the start of the pager's
    /// names), so it tells this connection's database file from another connection's.
    const char *databaseName;
    unsigned char *pending;
    sqlite3_int64 pendingOffset;
    int pendingLength;
    int pendingCapacity;
    /// The last write was a commit frame's header: its page completes the commit.
    int commitFrameStarted;
    /// In `waiting` (the files with writes waiting) while pendingLength > 0.
    RoloWALFile *nextWaiting;
    int isWaiting;
};

/// A database file.
typedef struct {
    RoloFile file;
    /// The name SQLite gave xOpen (the pager's own; compared by address, never copied).
    const char *name;
} RoloDatabaseFile;

static sqlite3_vfs *defaultVFS;
static sqlite3_vfs combiningVFS;
static sqlite3_io_methods walMethods;
static sqlite3_io_methods databaseMethods;

/// WAL files with writes waiting, so that a database file giving up the write lock finds its
/// WAL's; almost always empty between transactions.
static pthread_mutex_t waitingLock = PTHREAD_MUTEX_INITIALIZER;
static RoloWALFile *waiting;
/// How many files are in `waiting`: read without the lock by every barrier and shm lock.
static atomic_int waitingCount;

static void markWaiting(RoloWALFile *file) {
    if (file->isWaiting) return;
    pthread_mutex_lock(&waitingLock);
    file->nextWaiting = waiting;
    waiting = file;
    file->isWaiting = 1;
    atomic_fetch_add(&waitingCount, 1);
    pthread_mutex_unlock(&waitingLock);
}

static void unmarkWaiting(RoloWALFile *file) {
    if (!file->isWaiting) return;
    pthread_mutex_lock(&waitingLock);
    for (RoloWALFile **link = &waiting; *link; link = &(*link)->nextWaiting) {
        if (*link == file) {
            *link = file->nextWaiting;
            break;
        }
    }
    file->isWaiting = 0;
    file->nextWaiting = NULL;
    atomic_fetch_sub(&waitingCount, 1);
    pthread_mutex_unlock(&waitingLock);
}

/// Writes out what waits; SQLITE_OK when nothing did. In calls of at most
/// `ROLO_WAL_WRITE_LIMIT` bytes: the default VFS masks a write's length to 17 bits (SQLite
/// itself never writes more than a 64 KiB page at once), so a longer one came out short.
static int flushWAL(RoloWALFile *file) {
    file->commitFrameStarted = 0;
    if (file->pendingLength == 0) return SQLITE_OK;
    int length = file->pendingLength;
    file->pendingLength = 0;
    unmarkWaiting(file);
    for (int done = 0; done < length;) {
        int chunk = length - done < ROLO_WAL_WRITE_LIMIT ? length - done : ROLO_WAL_WRITE_LIMIT;
        int rc = file->file.real->pMethods->xWrite(file->file.real, file->pending + done, chunk, file->pendingOffset + done);
        if (rc != SQLITE_OK) return rc;
        done += chunk;
    }
    return SQLITE_OK;
}

// Every method the default VFS's file has, passed on to it.

#define REAL(pFile) (((RoloFile *)(pFile))->real)

static int forwardClose(sqlite3_file *pFile) { return REAL(pFile)->pMethods->xClose(REAL(pFile)); }
static int forwardRead(sqlite3_file *pFile, void *buffer, int amount, sqlite3_int64 offset) {
    return REAL(pFile)->pMethods->xRead(REAL(pFile), buffer, amount, offset);
}
static int forwardWrite(sqlite3_file *pFile, const void *data, int amount, sqlite3_int64 offset) {
    return REAL(pFile)->pMethods->xWrite(REAL(pFile), data, amount, offset);
}
static int forwardTruncate(sqlite3_file *pFile, sqlite3_int64 size) { return REAL(pFile)->pMethods->xTruncate(REAL(pFile), size); }
static int forwardSync(sqlite3_file *pFile, int flags) { return REAL(pFile)->pMethods->xSync(REAL(pFile), flags); }
static int forwardFileSize(sqlite3_file *pFile, sqlite3_int64 *size) { return REAL(pFile)->pMethods->xFileSize(REAL(pFile), size); }
static int forwardLock(sqlite3_file *pFile, int lock) { return REAL(pFile)->pMethods->xLock(REAL(pFile), lock); }
static int forwardUnlock(sqlite3_file *pFile, int lock) { return REAL(pFile)->pMethods->xUnlock(REAL(pFile), lock); }
static int forwardCheckReservedLock(sqlite3_file *pFile, int *result) {
    return REAL(pFile)->pMethods->xCheckReservedLock(REAL(pFile), result);
}
static int forwardFileControl(sqlite3_file *pFile, int op, void *arg) { return REAL(pFile)->pMethods->xFileControl(REAL(pFile), op, arg); }
static int forwardSectorSize(sqlite3_file *pFile) { return REAL(pFile)->pMethods->xSectorSize(REAL(pFile)); }
static int forwardDeviceCharacteristics(sqlite3_file *pFile) { return REAL(pFile)->pMethods->xDeviceCharacteristics(REAL(pFile)); }
static int forwardShmMap(sqlite3_file *pFile, int page, int pageSize, int extend, void volatile **memory) {
    return REAL(pFile)->pMethods->xShmMap(REAL(pFile), page, pageSize, extend, memory);
}
static int forwardShmLock(sqlite3_file *pFile, int offset, int n, int flags) {
    return REAL(pFile)->pMethods->xShmLock(REAL(pFile), offset, n, flags);
}
static void forwardShmBarrier(sqlite3_file *pFile) { REAL(pFile)->pMethods->xShmBarrier(REAL(pFile)); }
static int forwardShmUnmap(sqlite3_file *pFile, int deleteFlag) { return REAL(pFile)->pMethods->xShmUnmap(REAL(pFile), deleteFlag); }
static int forwardFetch(sqlite3_file *pFile, sqlite3_int64 offset, int amount, void **pointer) {
    return REAL(pFile)->pMethods->xFetch(REAL(pFile), offset, amount, pointer);
}
static int forwardUnfetch(sqlite3_file *pFile, sqlite3_int64 offset, void *pointer) {
    return REAL(pFile)->pMethods->xUnfetch(REAL(pFile), offset, pointer);
}

// The WAL file: what waits is written out before anything else uses the file.

static int walClose(sqlite3_file *pFile) {
    RoloWALFile *file = (RoloWALFile *)pFile;
    int flushed = flushWAL(file);
    int closed = forwardClose(pFile);
    free(file->pending);
    file->pending = NULL;
    file->databaseName = NULL;
    return flushed != SQLITE_OK ? flushed : closed;
}

/// Defines a WAL method that writes out what waits, then forwards.
#define FLUSHING(name, forward, parameters, arguments) \
    static int name parameters { \
        int rc = flushWAL((RoloWALFile *)pFile); \
        return rc != SQLITE_OK ? rc : forward arguments; \
    }

FLUSHING(walRead, forwardRead, (sqlite3_file *pFile, void *buffer, int amount, sqlite3_int64 offset),
         (pFile, buffer, amount, offset))
FLUSHING(walTruncate, forwardTruncate, (sqlite3_file *pFile, sqlite3_int64 size), (pFile, size))
FLUSHING(walSync, forwardSync, (sqlite3_file *pFile, int flags), (pFile, flags))
FLUSHING(walFileSize, forwardFileSize, (sqlite3_file *pFile, sqlite3_int64 *size), (pFile, size))
FLUSHING(walFileControl, forwardFileControl, (sqlite3_file *pFile, int op, void *arg), (pFile, op, arg))
FLUSHING(walFetch, forwardFetch, (sqlite3_file *pFile, sqlite3_int64 offset, int amount, void **pointer),
         (pFile, offset, amount, pointer))

static int walWrite(sqlite3_file *pFile, const void *data, int amount, sqlite3_int64 offset) {
    RoloWALFile *file = (RoloWALFile *)pFile;
    int completesCommit = file->commitFrameStarted;
    const unsigned char *bytes = data;
    // A frame header's bytes 4-7: the database's size in pages after a commit, zero in
    // every frame but the one that commits.
    int startsCommitFrame = amount == ROLO_WAL_FRAME_HEADER && (bytes[4] | bytes[5] | bytes[6] | bytes[7]) != 0;
    int rc;
    if (file->pendingLength > 0 && offset != file->pendingOffset + file->pendingLength) {
        rc = flushWAL(file);
        if (rc != SQLITE_OK) return rc;
    }
    if (file->pendingLength + amount > ROLO_WAL_BUFFER_LIMIT) {
        rc = flushWAL(file);
        if (rc != SQLITE_OK) return rc;
        // Longer than the buffer: SQLite's own write, which it keeps under 128 KiB.
        if (amount > ROLO_WAL_BUFFER_LIMIT) return forwardWrite(pFile, data, amount, offset);
    }
    if (file->pendingLength + amount > file->pendingCapacity) {
        int capacity = file->pendingCapacity ? file->pendingCapacity : 64 << 10;
        while (capacity < file->pendingLength + amount) capacity *= 2;
        unsigned char *grown = realloc(file->pending, (size_t)capacity);
        if (!grown) {
            // No memory for it: write it as SQLite would have, the commit's page included.
            rc = flushWAL(file);
            if (rc != SQLITE_OK) return rc;
            rc = forwardWrite(pFile, data, amount, offset);
            file->commitFrameStarted = rc == SQLITE_OK && startsCommitFrame;
            return rc;
        }
        file->pending = grown;
        file->pendingCapacity = capacity;
    }
    if (file->pendingLength == 0) file->pendingOffset = offset;
    memcpy(file->pending + file->pendingLength, data, (size_t)amount);
    file->pendingLength += amount;
    markWaiting(file);
    file->commitFrameStarted = startsCommitFrame;
    if (completesCommit) return flushWAL(file);
    return SQLITE_OK;
}

// The database file: giving up the WAL's write lock, or publishing a commit, writes out what
// the connection's WAL holds first.

/// Writes out what this connection's WAL holds. Other connections' barriers (every reader
/// calls one reading the wal-index header) must not touch it: a WAL file is the database
/// file's when both came from one pager, whose name pointer they share.
static int flushWALOf(RoloDatabaseFile *database) {
    if (atomic_load(&waitingCount) == 0 || database->name == NULL) return SQLITE_OK;
    pthread_mutex_lock(&waitingLock);
    RoloWALFile *found = NULL;
    for (RoloWALFile *file = waiting; file; file = file->nextWaiting) {
        if (file->databaseName == database->name) {
            found = file;
            break;
        }
    }
    pthread_mutex_unlock(&waitingLock);
    return found ? flushWAL(found) : SQLITE_OK;
}

/// Slot 0 of the wal-index's locks is the WAL's write lock (WAL_WRITE_LOCK in wal.c).
static int databaseShmLock(sqlite3_file *pFile, int offset, int n, int flags) {
    if ((flags & SQLITE_SHM_UNLOCK) && offset == 0 && n >= 1) {
        int rc = flushWALOf((RoloDatabaseFile *)pFile);
        if (rc != SQLITE_OK) return rc;
    }
    return forwardShmLock(pFile, offset, n, flags);
}

/// SQLite calls the barrier between writing a commit's wal-index header copies, before
/// readers can see it: with `synchronous` below FULL nothing syncs the WAL first, and frames
/// rewritten after the commit frame (a page written twice in one transaction) still wait.
static void databaseShmBarrier(sqlite3_file *pFile) {
    (void)flushWALOf((RoloDatabaseFile *)pFile);
    forwardShmBarrier(pFile);
}

static int combiningOpen(sqlite3_vfs *vfs, sqlite3_filename name, sqlite3_file *pFile, int flags, int *outFlags) {
    (void)vfs;
    int isWAL = (flags & SQLITE_OPEN_WAL) != 0;
    int isDatabase = (flags & SQLITE_OPEN_MAIN_DB) != 0 && name != NULL;
    if (!isWAL && !isDatabase) {
        // A journal or a temporary file: the default VFS's file itself, in our larger slot.
        return defaultVFS->xOpen(defaultVFS, name, pFile, flags, outFlags);
    }
    size_t header = isWAL ? sizeof(RoloWALFile) : sizeof(RoloDatabaseFile);
    header = (header + 7) & ~(size_t)7;
    sqlite3_file *real = (sqlite3_file *)((char *)pFile + header);
    memset(pFile, 0, header);
    int rc = defaultVFS->xOpen(defaultVFS, name, real, flags, outFlags);
    if (rc != SQLITE_OK) {
        // SQLite calls xClose only when pMethods is set; the default VFS cleans up its own.
        pFile->pMethods = NULL;
        return rc;
    }
    ((RoloFile *)pFile)->real = real;
    if (isWAL) {
        ((RoloWALFile *)pFile)->databaseName = sqlite3_filename_database(name);
        pFile->pMethods = &walMethods;
    } else {
        ((RoloDatabaseFile *)pFile)->name = sqlite3_filename_database(name);
        pFile->pMethods = &databaseMethods;
    }
    return SQLITE_OK;
}

int rolo_sqlite_register_wal_combining_vfs(void) {
    if (defaultVFS) return SQLITE_OK;
    sqlite3_vfs *found = sqlite3_vfs_find(NULL);
    if (!found) return SQLITE_ERROR;
    if (found->iVersion < 3) return SQLITE_MISUSE;
    defaultVFS = found;

    sqlite3_io_methods forwarding = {
        .iVersion = 3, .xClose = forwardClose, .xRead = forwardRead, .xWrite = forwardWrite,
        .xTruncate = forwardTruncate, .xSync = forwardSync, .xFileSize = forwardFileSize, .xLock = forwardLock,
        .xUnlock = forwardUnlock, .xCheckReservedLock = forwardCheckReservedLock, .xFileControl = forwardFileControl,
        .xSectorSize = forwardSectorSize, .xDeviceCharacteristics = forwardDeviceCharacteristics,
        .xShmMap = forwardShmMap, .xShmLock = forwardShmLock, .xShmBarrier = forwardShmBarrier,
        .xShmUnmap = forwardShmUnmap, .xFetch = forwardFetch, .xUnfetch = forwardUnfetch,
    };
    walMethods = forwarding;
    walMethods.xClose = walClose;
    walMethods.xRead = walRead;
    walMethods.xWrite = walWrite;
    walMethods.xTruncate = walTruncate;
    walMethods.xSync = walSync;
    walMethods.xFileSize = walFileSize;
    walMethods.xFileControl = walFileControl;
    walMethods.xFetch = walFetch;
    databaseMethods = forwarding;
    databaseMethods.xShmLock = databaseShmLock;
    databaseMethods.xShmBarrier = databaseShmBarrier;

    // The default VFS as it is but for opening files (and a larger slot for them): its other
    // methods take the VFS only for fields copied here (the unix VFS's xOpen reads pAppData,
    // and is called with the default VFS itself).
    size_t header = sizeof(RoloWALFile) > sizeof(RoloDatabaseFile) ? sizeof(RoloWALFile) : sizeof(RoloDatabaseFile);
    header = (header + 7) & ~(size_t)7;
    combiningVFS = *found;
    combiningVFS.pNext = NULL;
    combiningVFS.szOsFile = (int)header + found->szOsFile;
    combiningVFS.zName = "rolo-wal-combining";
    combiningVFS.xOpen = combiningOpen;
    return sqlite3_vfs_register(&combiningVFS, 1);
}
