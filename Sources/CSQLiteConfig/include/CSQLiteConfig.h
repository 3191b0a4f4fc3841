#ifndef ROLO_CSQLITECONFIG_H
#define ROLO_CSQLITECONFIG_H

/// Turns off SQLite's memory statistics (SQLITE_CONFIG_MEMSTATUS). With them on, every
/// SQLite allocation takes one process-wide mutex around malloc; Debian's build has no
/// lookaside, so a GET's read makes dozens of them, and two event loops reading at once
/// wait for each other in that mutex. `sqlite3_config` is variadic, which Swift cannot call.
/// Takes effect only before SQLite is initialized (the first connection opened); returns
/// SQLite's result code (SQLITE_MISUSE when it came too late).
int rolo_sqlite_disable_memory_statistics(void);

/// Makes SQLite's default VFS one that writes a transaction's WAL frames with one write each
/// run instead of two calls a frame (WALWriteCombining.c says when they reach the file). Call
/// after `rolo_sqlite_disable_memory_statistics` (registering a VFS initializes SQLite); once
/// is enough, later calls do nothing. Returns SQLite's result code.
int rolo_sqlite_register_wal_combining_vfs(void);

#endif
