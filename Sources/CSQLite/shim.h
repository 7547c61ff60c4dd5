#ifndef BREEZE_CSQLITE_SHIM_H
#define BREEZE_CSQLITE_SHIM_H
#include <sqlite3.h>
#include <stdint.h>
#include <unistd.h>

/// SQLITE_TRANSIENT is a macro casting -1 to a function pointer; Swift cannot import it.
static inline sqlite3_destructor_type breeze_sqlite_transient(void) { return SQLITE_TRANSIENT; }
/// SQLITE_STATIC, for blobs bound only while their bytes are pinned.
static inline sqlite3_destructor_type breeze_sqlite_static(void) { return SQLITE_STATIC; }

/// The busy handler of every Breeze connection: retries every 50 us for the first 2 ms (most transactions
/// that hold the lock are that short), then every 0.5 ms up to 32 ms, then every 2 ms, and gives up once the
/// sleeps add up to the timeout (`ctx`, milliseconds). `n` is how many times SQLite has called it for this
/// lock (https://www.sqlite.org/c3ref/busy_handler.html).
static int breeze_busy_wait(void *ctx, int n) {
    long timeout_us = (long)(intptr_t)ctx * 1000, delay, spent;
    if (n < 40) { delay = 50; spent = 50L * n; }
    else if (n < 100) { delay = 500; spent = 2000 + 500L * (n - 40); }
    else { delay = 2000; spent = 32000 + 2000L * (long)(n - 100); }
    if (spent >= timeout_us) return 0;
    usleep((useconds_t)delay);
    return 1;
}

/// Syncs the connection's write-ahead log through SQLite's VFS (`xSync` of the file that
/// `SQLITE_FCNTL_JOURNAL_POINTER` names, the WAL in WAL mode: https://www.sqlite.org/c3ref/c_fcntl_begin_atomic_write.html),
/// as a `synchronous=FULL` commit would have synced it. SQLITE_OK when there is no WAL open yet.
static inline int breeze_sync_wal(sqlite3 *db) {
    sqlite3_file *wal = 0;
    int rc = sqlite3_file_control(db, "main", SQLITE_FCNTL_JOURNAL_POINTER, &wal);
    if (rc != SQLITE_OK) return rc;
    if (wal == 0 || wal->pMethods == 0) return SQLITE_OK;
    return wal->pMethods->xSync(wal, SQLITE_SYNC_NORMAL);
}

/// Installs `breeze_busy_wait` with a timeout in milliseconds.
static inline int breeze_set_busy_handler(sqlite3 *db, int timeout_ms) {
    return sqlite3_busy_handler(db, breeze_busy_wait, (void *)(intptr_t)timeout_ms);
}
#endif
