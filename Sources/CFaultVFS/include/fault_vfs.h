#ifndef BREEZE_FAULT_VFS_H
#define BREEZE_FAULT_VFS_H
// A fault-injecting SQLite VFS for Breeze's storage fault tests (test-only: linked into breeze-torture,
// never into the `breeze` product). It wraps the default (unix) VFS and becomes the default itself.
//
// - Power loss (`power_loss` = 1): every write to a named database, WAL or journal file is kept in this
//   process's memory until the file is synced (xSync); reads see it. When the process is killed (kill -9),
//   unsynced writes are gone, exactly as after a power cut. A clean close also drops them (power cut
//   right after exit): only what SQLite synced survives.
// - Faults read from `control_path` (re-read whenever the file changes; removing it lifts every fault):
//     quota N          writes may grow the files by N more bytes in total, then fail with SQLITE_FULL
//     write-error K    the K-th write after the file was (re)loaded fails with SQLITE_IOERR_WRITE (once)
//     fsync-error K    the K-th sync after the file was (re)loaded fails with SQLITE_IOERR_FSYNC (once)
// - Counters of what fired are kept in `stats_path` (a small file mapped shared, so they survive kill -9),
//   as `BreezeFaultStats`.

#include <stdint.h>

/// What the fault VFS did, in a file shared with the test (eight little-endian 64-bit integers, in this order).
typedef struct BreezeFaultStats {
    int64_t writes;          ///< write calls seen
    int64_t syncs;           ///< sync calls seen
    int64_t unsynced_writes; ///< writes held in memory and not yet synced (lost if the process dies now)
    int64_t dropped_writes;  ///< unsynced writes dropped at close
    int64_t fired_full;      ///< writes refused with SQLITE_FULL (quota)
    int64_t fired_write;     ///< writes failed with SQLITE_IOERR_WRITE
    int64_t fired_fsync;     ///< syncs failed with SQLITE_IOERR_FSYNC
    int64_t reloads;         ///< times the control file was (re)read
} BreezeFaultStats;

/// Registers the fault VFS as SQLite's default. `control_path` and `stats_path` may be NULL.
/// Returns SQLITE_OK or an SQLite error code.
int breeze_fault_vfs_install(const char *control_path, const char *stats_path, int power_loss);

#endif
