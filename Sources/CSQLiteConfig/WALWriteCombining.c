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

/// A WAL file: the default VFS's file after it, writes waiting in `pending`.
typedef struct RoloWALFile RoloWALFile;
struct RoloWALFile {
    sqlite3_file base;
    sqlite3_file *real;
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

/// A database file: the default VFS's file after it.
typedef struct {
    sqlite3_file base;
    sqlite3_file *real;
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
        int rc = file->real->pMethods->xWrite(file->real, file->pending + done, chunk, file->pendingOffset + done);
        if (rc != SQLITE_OK) return rc;
        done += chunk;
    }
    return SQLITE_OK;
}

static int walClose(sqlite3_file *pFile) {
    RoloWALFile *file = (RoloWALFile *)pFile;
    int flushed = flushWAL(file);
    int closed = file->real->pMethods->xClose(file->real);
    free(file->pending);
    file->pending = NULL;
    file->databaseName = NULL;
    return flushed != SQLITE_OK ? flushed : closed;
}

static int walRead(sqlite3_file *pFile, void *buffer, int amount, sqlite3_int64 offset) {
    RoloWALFile *file = (RoloWALFile *)pFile;
    int rc = flushWAL(file);
    if (rc != SQLITE_OK) return rc;
    return file->real->pMethods->xRead(file->real, buffer, amount, offset);
}

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
        if (amount > ROLO_WAL_BUFFER_LIMIT) return file->real->pMethods->xWrite(file->real, data, amount, offset);
    }
    if (file->pendingLength + amount > file->pendingCapacity) {
        int capacity = file->pendingCapacity ? file->pendingCapacity : 64 << 10;
        while (capacity < file->pendingLength + amount) capacity *= 2;
        unsigned char *grown = realloc(file->pending, (size_t)capacity);
        if (!grown) {
            // No memory for it: write it as SQLite would have, the commit's page included.
            rc = flushWAL(file);
            if (rc != SQLITE_OK) return rc;
            rc = file->real->pMethods->xWrite(file->real, data, amount, offset);
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

static int walTruncate(sqlite3_file *pFile, sqlite3_int64 size) {
    RoloWALFile *file = (RoloWALFile *)pFile;
    int rc = flushWAL(file);
    if (rc != SQLITE_OK) return rc;
    return file->real->pMethods->xTruncate(file->real, size);
}

static int walSync(sqlite3_file *pFile, int flags) {
    RoloWALFile *file = (RoloWALFile *)pFile;
    int rc = flushWAL(file);
    if (rc != SQLITE_OK) return rc;
    return file->real->pMethods->xSync(file->real, flags);
}

static int walFileSize(sqlite3_file *pFile, sqlite3_int64 *size) {
    RoloWALFile *file = (RoloWALFile *)pFile;
    int rc = flushWAL(file);
    if (rc != SQLITE_OK) return rc;
    return file->real->pMethods->xFileSize(file->real, size);
}

static int walLock(sqlite3_file *pFile, int lock) {
    RoloWALFile *file = (RoloWALFile *)pFile;
    return file->real->pMethods->xLock(file->real, lock);
}

static int walUnlock(sqlite3_file *pFile, int lock) {
    RoloWALFile *file = (RoloWALFile *)pFile;
    return file->real->pMethods->xUnlock(file->real, lock);
}

static int walCheckReservedLock(sqlite3_file *pFile, int *result) {
    RoloWALFile *file = (RoloWALFile *)pFile;
    return file->real->pMethods->xCheckReservedLock(file->real, result);
}

static int walFileControl(sqlite3_file *pFile, int op, void *arg) {
    RoloWALFile *file = (RoloWALFile *)pFile;
    int rc = flushWAL(file);
    if (rc != SQLITE_OK) return rc;
    return file->real->pMethods->xFileControl(file->real, op, arg);
}

static int walSectorSize(sqlite3_file *pFile) {
    RoloWALFile *file = (RoloWALFile *)pFile;
    return file->real->pMethods->xSectorSize(file->real);
}

static int walDeviceCharacteristics(sqlite3_file *pFile) {
    RoloWALFile *file = (RoloWALFile *)pFile;
    return file->real->pMethods->xDeviceCharacteristics(file->real);
}

static int walShmMap(sqlite3_file *pFile, int page, int pageSize, int extend, void volatile **memory) {
    RoloWALFile *file = (RoloWALFile *)pFile;
    return file->real->pMethods->xShmMap(file->real, page, pageSize, extend, memory);
}

static int walShmLock(sqlite3_file *pFile, int offset, int n, int flags) {
    RoloWALFile *file = (RoloWALFile *)pFile;
    return file->real->pMethods->xShmLock(file->real, offset, n, flags);
}

static void walShmBarrier(sqlite3_file *pFile) {
    RoloWALFile *file = (RoloWALFile *)pFile;
    file->real->pMethods->xShmBarrier(file->real);
}

static int walShmUnmap(sqlite3_file *pFile, int deleteFlag) {
    RoloWALFile *file = (RoloWALFile *)pFile;
    return file->real->pMethods->xShmUnmap(file->real, deleteFlag);
}

static int walFetch(sqlite3_file *pFile, sqlite3_int64 offset, int amount, void **pointer) {
    RoloWALFile *file = (RoloWALFile *)pFile;
    int rc = flushWAL(file);
    if (rc != SQLITE_OK) return rc;
    return file->real->pMethods->xFetch(file->real, offset, amount, pointer);
}

static int walUnfetch(sqlite3_file *pFile, sqlite3_int64 offset, void *pointer) {
    RoloWALFile *file = (RoloWALFile *)pFile;
    return file->real->pMethods->xUnfetch(file->real, offset, pointer);
}

// The database file: every method the default's, but giving up the WAL's write lock writes
// out what the connection's WAL holds first.

#define DATABASE_REAL(pFile) (((RoloDatabaseFile *)(pFile))->real)

static int databaseClose(sqlite3_file *pFile) { return DATABASE_REAL(pFile)->pMethods->xClose(DATABASE_REAL(pFile)); }
static int databaseRead(sqlite3_file *pFile, void *buffer, int amount, sqlite3_int64 offset) {
    return DATABASE_REAL(pFile)->pMethods->xRead(DATABASE_REAL(pFile), buffer, amount, offset);
}
static int databaseWrite(sqlite3_file *pFile, const void *data, int amount, sqlite3_int64 offset) {
    return DATABASE_REAL(pFile)->pMethods->xWrite(DATABASE_REAL(pFile), data, amount, offset);
}
static int databaseTruncate(sqlite3_file *pFile, sqlite3_int64 size) {
    return DATABASE_REAL(pFile)->pMethods->xTruncate(DATABASE_REAL(pFile), size);
}
static int databaseSync(sqlite3_file *pFile, int flags) { return DATABASE_REAL(pFile)->pMethods->xSync(DATABASE_REAL(pFile), flags); }
static int databaseFileSize(sqlite3_file *pFile, sqlite3_int64 *size) {
    return DATABASE_REAL(pFile)->pMethods->xFileSize(DATABASE_REAL(pFile), size);
}
static int databaseLock(sqlite3_file *pFile, int lock) { return DATABASE_REAL(pFile)->pMethods->xLock(DATABASE_REAL(pFile), lock); }
static int databaseUnlock(sqlite3_file *pFile, int lock) { return DATABASE_REAL(pFile)->pMethods->xUnlock(DATABASE_REAL(pFile), lock); }
static int databaseCheckReservedLock(sqlite3_file *pFile, int *result) {
    return DATABASE_REAL(pFile)->pMethods->xCheckReservedLock(DATABASE_REAL(pFile), result);
}
static int databaseFileControl(sqlite3_file *pFile, int op, void *arg) {
    return DATABASE_REAL(pFile)->pMethods->xFileControl(DATABASE_REAL(pFile), op, arg);
}
static int databaseSectorSize(sqlite3_file *pFile) { return DATABASE_REAL(pFile)->pMethods->xSectorSize(DATABASE_REAL(pFile)); }
static int databaseDeviceCharacteristics(sqlite3_file *pFile) {
    return DATABASE_REAL(pFile)->pMethods->xDeviceCharacteristics(DATABASE_REAL(pFile));
}
static int databaseShmMap(sqlite3_file *pFile, int page, int pageSize, int extend, void volatile **memory) {
    return DATABASE_REAL(pFile)->pMethods->xShmMap(DATABASE_REAL(pFile), page, pageSize, extend, memory);
}

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
    RoloDatabaseFile *database = (RoloDatabaseFile *)pFile;
    if ((flags & SQLITE_SHM_UNLOCK) && offset == 0 && n >= 1) {
        int rc = flushWALOf(database);
        if (rc != SQLITE_OK) return rc;
    }
    return database->real->pMethods->xShmLock(database->real, offset, n, flags);
}

/// SQLite calls the barrier between writing a commit's wal-index header copies, before
/// readers can see it: with `synchronous` below FULL nothing syncs the WAL first, and frames
/// rewritten after the commit frame (a page written twice in one transaction) still wait.
static void databaseShmBarrier(sqlite3_file *pFile) {
    (void)flushWALOf((RoloDatabaseFile *)pFile);
    DATABASE_REAL(pFile)->pMethods->xShmBarrier(DATABASE_REAL(pFile));
}
static int databaseShmUnmap(sqlite3_file *pFile, int deleteFlag) {
    return DATABASE_REAL(pFile)->pMethods->xShmUnmap(DATABASE_REAL(pFile), deleteFlag);
}
static int databaseFetch(sqlite3_file *pFile, sqlite3_int64 offset, int amount, void **pointer) {
    return DATABASE_REAL(pFile)->pMethods->xFetch(DATABASE_REAL(pFile), offset, amount, pointer);
}
static int databaseUnfetch(sqlite3_file *pFile, sqlite3_int64 offset, void *pointer) {
    return DATABASE_REAL(pFile)->pMethods->xUnfetch(DATABASE_REAL(pFile), offset, pointer);
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
    if (isWAL) {
        RoloWALFile *file = (RoloWALFile *)pFile;
        file->real = real;
        file->databaseName = sqlite3_filename_database(name);
        pFile->pMethods = &walMethods;
    } else {
        RoloDatabaseFile *file = (RoloDatabaseFile *)pFile;
        file->real = real;
        file->name = sqlite3_filename_database(name);
        pFile->pMethods = &databaseMethods;
    }
    return SQLITE_OK;
}

static int combiningDelete(sqlite3_vfs *vfs, const char *name, int syncDirectory) {
    (void)vfs;
    return defaultVFS->xDelete(defaultVFS, name, syncDirectory);
}
static int combiningAccess(sqlite3_vfs *vfs, const char *name, int flags, int *result) {
    (void)vfs;
    return defaultVFS->xAccess(defaultVFS, name, flags, result);
}
static int combiningFullPathname(sqlite3_vfs *vfs, const char *name, int size, char *out) {
    (void)vfs;
    return defaultVFS->xFullPathname(defaultVFS, name, size, out);
}
static void *combiningDlOpen(sqlite3_vfs *vfs, const char *name) {
    (void)vfs;
    return defaultVFS->xDlOpen(defaultVFS, name);
}
static void combiningDlError(sqlite3_vfs *vfs, int size, char *message) {
    (void)vfs;
    defaultVFS->xDlError(defaultVFS, size, message);
}
static void (*combiningDlSym(sqlite3_vfs *vfs, void *handle, const char *symbol))(void) {
    (void)vfs;
    return defaultVFS->xDlSym(defaultVFS, handle, symbol);
}
static void combiningDlClose(sqlite3_vfs *vfs, void *handle) {
    (void)vfs;
    defaultVFS->xDlClose(defaultVFS, handle);
}
static int combiningRandomness(sqlite3_vfs *vfs, int size, char *out) {
    (void)vfs;
    return defaultVFS->xRandomness(defaultVFS, size, out);
}
static int combiningSleep(sqlite3_vfs *vfs, int microseconds) {
    (void)vfs;
    return defaultVFS->xSleep(defaultVFS, microseconds);
}
static int combiningCurrentTime(sqlite3_vfs *vfs, double *now) {
    (void)vfs;
    return defaultVFS->xCurrentTime(defaultVFS, now);
}
static int combiningGetLastError(sqlite3_vfs *vfs, int size, char *out) {
    (void)vfs;
    return defaultVFS->xGetLastError ? defaultVFS->xGetLastError(defaultVFS, size, out) : 0;
}
static int combiningCurrentTimeInt64(sqlite3_vfs *vfs, sqlite3_int64 *now) {
    (void)vfs;
    return defaultVFS->xCurrentTimeInt64(defaultVFS, now);
}
static int combiningSetSystemCall(sqlite3_vfs *vfs, const char *name, sqlite3_syscall_ptr call) {
    (void)vfs;
    return defaultVFS->xSetSystemCall(defaultVFS, name, call);
}
static sqlite3_syscall_ptr combiningGetSystemCall(sqlite3_vfs *vfs, const char *name) {
    (void)vfs;
    return defaultVFS->xGetSystemCall(defaultVFS, name);
}
static const char *combiningNextSystemCall(sqlite3_vfs *vfs, const char *name) {
    (void)vfs;
    return defaultVFS->xNextSystemCall(defaultVFS, name);
}

int rolo_sqlite_register_wal_combining_vfs(void) {
    if (defaultVFS) return SQLITE_OK;
    sqlite3_vfs *found = sqlite3_vfs_find(NULL);
    if (!found) return SQLITE_ERROR;
    if (found->iVersion < 3) return SQLITE_MISUSE;
    defaultVFS = found;

    walMethods = (sqlite3_io_methods){
        .iVersion = 3, .xClose = walClose, .xRead = walRead, .xWrite = walWrite, .xTruncate = walTruncate,
        .xSync = walSync, .xFileSize = walFileSize, .xLock = walLock, .xUnlock = walUnlock,
        .xCheckReservedLock = walCheckReservedLock, .xFileControl = walFileControl, .xSectorSize = walSectorSize,
        .xDeviceCharacteristics = walDeviceCharacteristics, .xShmMap = walShmMap, .xShmLock = walShmLock,
        .xShmBarrier = walShmBarrier, .xShmUnmap = walShmUnmap, .xFetch = walFetch, .xUnfetch = walUnfetch,
    };
    databaseMethods = (sqlite3_io_methods){
        .iVersion = 3, .xClose = databaseClose, .xRead = databaseRead, .xWrite = databaseWrite,
        .xTruncate = databaseTruncate, .xSync = databaseSync, .xFileSize = databaseFileSize, .xLock = databaseLock,
        .xUnlock = databaseUnlock, .xCheckReservedLock = databaseCheckReservedLock,
        .xFileControl = databaseFileControl, .xSectorSize = databaseSectorSize,
        .xDeviceCharacteristics = databaseDeviceCharacteristics, .xShmMap = databaseShmMap,
        .xShmLock = databaseShmLock, .xShmBarrier = databaseShmBarrier, .xShmUnmap = databaseShmUnmap,
        .xFetch = databaseFetch, .xUnfetch = databaseUnfetch,
    };
    size_t header = sizeof(RoloWALFile) > sizeof(RoloDatabaseFile) ? sizeof(RoloWALFile) : sizeof(RoloDatabaseFile);
    header = (header + 7) & ~(size_t)7;
    combiningVFS = (sqlite3_vfs){
        .iVersion = 3, .szOsFile = (int)header + found->szOsFile, .mxPathname = found->mxPathname,
        .zName = "rolo-wal-combining", .xOpen = combiningOpen, .xDelete = combiningDelete,
        .xAccess = combiningAccess, .xFullPathname = combiningFullPathname, .xDlOpen = combiningDlOpen,
        .xDlError = combiningDlError, .xDlSym = combiningDlSym, .xDlClose = combiningDlClose,
        .xRandomness = combiningRandomness, .xSleep = combiningSleep, .xCurrentTime = combiningCurrentTime,
        .xGetLastError = combiningGetLastError, .xCurrentTimeInt64 = combiningCurrentTimeInt64,
        .xSetSystemCall = combiningSetSystemCall, .xGetSystemCall = combiningGetSystemCall,
        .xNextSystemCall = combiningNextSystemCall,
    };
    return sqlite3_vfs_register(&combiningVFS, 1);
}
