// The fault-injecting SQLite VFS: see include/fault_vfs.h. Test-only.
//
// Every file is opened through the real (default unix) VFS; this layer sits between SQLite and it:
// `FaultFile` holds the real `sqlite3_file` right after itself (szOsFile covers both). Locks and shared
// memory pass straight through. The io methods are version 2 (no xFetch), so SQLite never reads through
// mmap behind the shadow buffer.
#include "fault_vfs.h"
#include <sqlite3.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <pthread.h>

typedef struct FaultFile {
    sqlite3_file base;
    sqlite3_file *real;
    int shadow;                    // power-loss mode: contents live in `buf` until synced
    unsigned char *buf;
    sqlite3_int64 size, cap;
    sqlite3_int64 dirty_lo, dirty_hi;  // the range written since the last sync (lo >= hi: clean)
    sqlite3_int64 synced_size;     // size of the real file after the last sync
    int64_t pending;               // writes since the last sync
} FaultFile;

static sqlite3_vfs *real_vfs;
static sqlite3_vfs fault_vfs;
static int power_loss;
static char control_path[4096];
static BreezeFaultStats local_stats;
static BreezeFaultStats *stats = &local_stats;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

// The control file's faults, and the state counted since it was loaded.
static struct {
    struct timespec mtime;
    off_t size;
    ino_t ino;
    int present;
    int64_t quota;          // -1: no quota
    int64_t grown;          // bytes the files grew since loading
    int64_t write_error_at; // 0: none
    int64_t fsync_error_at;
    int64_t writes, syncs;  // calls since loading
} ctl = {.quota = -1};

static void reload_locked(void) {
    if (!control_path[0]) return;
    struct stat st;
    if (stat(control_path, &st) != 0) {
        if (ctl.present) {
            memset(&ctl, 0, sizeof ctl);
            ctl.quota = -1;
            stats->reloads++;
        }
        return;
    }
    if (ctl.present && st.st_mtim.tv_sec == ctl.mtime.tv_sec && st.st_mtim.tv_nsec == ctl.mtime.tv_nsec &&
        st.st_size == ctl.size && st.st_ino == ctl.ino) return;
    memset(&ctl, 0, sizeof ctl);
    ctl.quota = -1;
    ctl.present = 1;
    ctl.mtime = st.st_mtim;
    ctl.size = st.st_size;
    ctl.ino = st.st_ino;
    stats->reloads++;
    FILE *f = fopen(control_path, "r");
    if (!f) return;
    char word[64];
    long long n;
    while (fscanf(f, "%63s %lld", word, &n) == 2) {
        if (strcmp(word, "quota") == 0) ctl.quota = n;
        else if (strcmp(word, "write-error") == 0) ctl.write_error_at = n;
        else if (strcmp(word, "fsync-error") == 0) ctl.fsync_error_at = n;
    }
    fclose(f);
}

/// Decides whether a write of `amt` bytes at `off` to a file of `size` bytes fails; counts what fired.
static int write_fault(sqlite3_int64 size, int amt, sqlite3_int64 off) {
    pthread_mutex_lock(&lock);
    reload_locked();
    stats->writes++;
    ctl.writes++;
    int rc = SQLITE_OK;
    sqlite3_int64 growth = off + amt > size ? off + amt - size : 0;
    if (ctl.write_error_at > 0 && ctl.writes == ctl.write_error_at) {
        stats->fired_write++;
        rc = SQLITE_IOERR_WRITE;
    } else if (ctl.quota >= 0 && growth > 0 && ctl.grown + growth > ctl.quota) {
        stats->fired_full++;
        rc = SQLITE_FULL;
    } else {
        ctl.grown += growth;
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

static int sync_fault(void) {
    pthread_mutex_lock(&lock);
    reload_locked();
    stats->syncs++;
    ctl.syncs++;
    int rc = SQLITE_OK;
    if (ctl.fsync_error_at > 0 && ctl.syncs == ctl.fsync_error_at) {
        stats->fired_fsync++;
        rc = SQLITE_IOERR_FSYNC;
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

static void add_unsynced(int64_t delta) {
    pthread_mutex_lock(&lock);
    stats->unsynced_writes += delta;
    pthread_mutex_unlock(&lock);
}

// MARK: io methods

static int f_close(sqlite3_file *pf) {
    FaultFile *f = (FaultFile *)pf;
    if (f->shadow) {
        // Unsynced writes never reach the disk (power cut right after close).
        pthread_mutex_lock(&lock);
        stats->unsynced_writes -= f->pending;
        stats->dropped_writes += f->pending;
        pthread_mutex_unlock(&lock);
        free(f->buf);
        f->buf = NULL;
    }
    return f->real->pMethods ? f->real->pMethods->xClose(f->real) : SQLITE_OK;
}

static int f_read(sqlite3_file *pf, void *out, int amt, sqlite3_int64 off) {
    FaultFile *f = (FaultFile *)pf;
    if (!f->shadow) return f->real->pMethods->xRead(f->real, out, amt, off);
    sqlite3_int64 avail = off >= f->size ? 0 : (f->size - off < amt ? f->size - off : amt);
    if (avail > 0) memcpy(out, f->buf + off, (size_t)avail);
    if (avail < amt) {
        memset((char *)out + avail, 0, (size_t)(amt - avail));
        return SQLITE_IOERR_SHORT_READ;
    }
    return SQLITE_OK;
}

static int grow(FaultFile *f, sqlite3_int64 n) {
    if (n <= f->cap) return SQLITE_OK;
    sqlite3_int64 cap = f->cap ? f->cap : 65536;
    while (cap < n) cap *= 2;
    unsigned char *b = realloc(f->buf, (size_t)cap);
    if (!b) return SQLITE_NOMEM;
    f->buf = b;
    f->cap = cap;
    return SQLITE_OK;
}

static void mark_dirty(FaultFile *f, sqlite3_int64 lo, sqlite3_int64 hi) {
    if (f->dirty_lo >= f->dirty_hi) { f->dirty_lo = lo; f->dirty_hi = hi; return; }
    if (lo < f->dirty_lo) f->dirty_lo = lo;
    if (hi > f->dirty_hi) f->dirty_hi = hi;
}

static int f_write(sqlite3_file *pf, const void *data, int amt, sqlite3_int64 off) {
    FaultFile *f = (FaultFile *)pf;
    sqlite3_int64 size = f->size;
    if (!f->shadow && f->real->pMethods->xFileSize(f->real, &size) != SQLITE_OK) size = 0;
    int rc = write_fault(size, amt, off);
    if (rc != SQLITE_OK) return rc;
    if (!f->shadow) return f->real->pMethods->xWrite(f->real, data, amt, off);
    if ((rc = grow(f, off + amt)) != SQLITE_OK) return rc;
    if (off > f->size) memset(f->buf + f->size, 0, (size_t)(off - f->size));
    memcpy(f->buf + off, data, (size_t)amt);
    if (off + amt > f->size) f->size = off + amt;
    mark_dirty(f, off, off + amt);
    f->pending++;
    add_unsynced(1);
    return SQLITE_OK;
}

static int f_truncate(sqlite3_file *pf, sqlite3_int64 n) {
    FaultFile *f = (FaultFile *)pf;
    if (!f->shadow) return f->real->pMethods->xTruncate(f->real, n);
    if (n > f->size) {
        int rc = grow(f, n);
        if (rc != SQLITE_OK) return rc;
        memset(f->buf + f->size, 0, (size_t)(n - f->size));
        mark_dirty(f, f->size, n);
    }
    f->size = n;
    if (f->dirty_hi > n) f->dirty_hi = n;
    f->pending++;
    add_unsynced(1);
    return SQLITE_OK;
}

static int f_sync(sqlite3_file *pf, int flags) {
    FaultFile *f = (FaultFile *)pf;
    int rc = sync_fault();
    if (rc != SQLITE_OK) return rc;
    if (f->shadow) {
        // In pieces: the unix VFS writes at most 128 KiB per call (it masks the length with 0x1ffff).
        for (sqlite3_int64 at = f->dirty_lo; at < f->dirty_hi; at += 65536) {
            int n = f->dirty_hi - at < 65536 ? (int)(f->dirty_hi - at) : 65536;
            rc = f->real->pMethods->xWrite(f->real, f->buf + at, n, at);
            if (rc != SQLITE_OK) return rc;
        }
        if (f->size < f->synced_size || f->size > f->synced_size) {
            rc = f->real->pMethods->xTruncate(f->real, f->size);
            if (rc != SQLITE_OK) return rc;
        }
        f->dirty_lo = f->dirty_hi = 0;
        f->synced_size = f->size;
    }
    rc = f->real->pMethods->xSync(f->real, flags);
    if (rc == SQLITE_OK && f->shadow) {
        // Durable only once the real fsync returned.
        add_unsynced(-f->pending);
        f->pending = 0;
    }
    return rc;
}

static int f_file_size(sqlite3_file *pf, sqlite3_int64 *out) {
    FaultFile *f = (FaultFile *)pf;
    if (!f->shadow) return f->real->pMethods->xFileSize(f->real, out);
    *out = f->size;
    return SQLITE_OK;
}

static int f_lock(sqlite3_file *pf, int l) { FaultFile *f = (FaultFile *)pf; return f->real->pMethods->xLock(f->real, l); }
static int f_unlock(sqlite3_file *pf, int l) { FaultFile *f = (FaultFile *)pf; return f->real->pMethods->xUnlock(f->real, l); }
static int f_check_reserved(sqlite3_file *pf, int *out) {
    FaultFile *f = (FaultFile *)pf;
    return f->real->pMethods->xCheckReservedLock(f->real, out);
}

static int f_file_control(sqlite3_file *pf, int op, void *arg) {
    FaultFile *f = (FaultFile *)pf;
    // A size hint would extend the real file behind the shadow's back; it is only a hint.
    if (f->shadow && op == SQLITE_FCNTL_SIZE_HINT) return SQLITE_OK;
    return f->real->pMethods->xFileControl(f->real, op, arg);
}

static int f_sector_size(sqlite3_file *pf) { FaultFile *f = (FaultFile *)pf; return f->real->pMethods->xSectorSize(f->real); }
static int f_device(sqlite3_file *pf) { FaultFile *f = (FaultFile *)pf; return f->real->pMethods->xDeviceCharacteristics(f->real); }
static int f_shm_map(sqlite3_file *pf, int pg, int sz, int ext, void volatile **pp) {
    FaultFile *f = (FaultFile *)pf;
    return f->real->pMethods->xShmMap(f->real, pg, sz, ext, pp);
}
static int f_shm_lock(sqlite3_file *pf, int off, int n, int flags) {
    FaultFile *f = (FaultFile *)pf;
    return f->real->pMethods->xShmLock(f->real, off, n, flags);
}
static void f_shm_barrier(sqlite3_file *pf) { FaultFile *f = (FaultFile *)pf; f->real->pMethods->xShmBarrier(f->real); }
static int f_shm_unmap(sqlite3_file *pf, int del) { FaultFile *f = (FaultFile *)pf; return f->real->pMethods->xShmUnmap(f->real, del); }

static const sqlite3_io_methods fault_io = {
    2, f_close, f_read, f_write, f_truncate, f_sync, f_file_size, f_lock, f_unlock, f_check_reserved,
    f_file_control, f_sector_size, f_device, f_shm_map, f_shm_lock, f_shm_barrier, f_shm_unmap, 0, 0,
};

// MARK: the VFS

static int f_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *pf, int flags, int *out_flags) {
    (void)vfs;
    FaultFile *f = (FaultFile *)pf;
    memset(f, 0, sizeof *f);
    f->real = (sqlite3_file *)(f + 1);
    int rc = real_vfs->xOpen(real_vfs, name, f->real, flags, out_flags);
    if (rc != SQLITE_OK) {
        // SQLite calls xClose only when pMethods is set; the real file cleaned up after itself.
        pf->pMethods = 0;
        return rc;
    }
    pf->pMethods = &fault_io;
    int kind = flags & (SQLITE_OPEN_MAIN_DB | SQLITE_OPEN_WAL | SQLITE_OPEN_MAIN_JOURNAL);
    if (power_loss && name && kind) {
        sqlite3_int64 size = 0;
        rc = f->real->pMethods->xFileSize(f->real, &size);
        if (rc == SQLITE_OK && size > 0) {
            rc = grow(f, size);
            if (rc == SQLITE_OK) rc = f->real->pMethods->xRead(f->real, f->buf, (int)size, 0);
        }
        if (rc != SQLITE_OK) {
            f->real->pMethods->xClose(f->real);
            free(f->buf);
            pf->pMethods = 0;
            return rc == SQLITE_IOERR_SHORT_READ ? SQLITE_IOERR_READ : rc;
        }
        f->shadow = 1;
        f->size = f->synced_size = size;
    }
    return SQLITE_OK;
}

int breeze_fault_vfs_install(const char *control, const char *stats_file, int lose_unsynced) {
    if (real_vfs) return SQLITE_MISUSE;
    real_vfs = sqlite3_vfs_find(0);
    if (!real_vfs) return SQLITE_ERROR;
    power_loss = lose_unsynced;
    if (control) snprintf(control_path, sizeof control_path, "%s", control);
    if (stats_file) {
        int fd = open(stats_file, O_RDWR | O_CREAT, 0644);
        if (fd < 0) return SQLITE_CANTOPEN;
        if (ftruncate(fd, sizeof(BreezeFaultStats)) != 0) { close(fd); return SQLITE_IOERR; }
        void *p = mmap(0, sizeof(BreezeFaultStats), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        close(fd);
        if (p == MAP_FAILED) return SQLITE_IOERR;
        stats = p;
        memset(stats, 0, sizeof *stats);
    }
    fault_vfs = *real_vfs;
    fault_vfs.zName = "breeze-fault";
    fault_vfs.pNext = 0;
    fault_vfs.szOsFile = (int)sizeof(FaultFile) + real_vfs->szOsFile;
    fault_vfs.xOpen = f_open;
    return sqlite3_vfs_register(&fault_vfs, 1);
}
