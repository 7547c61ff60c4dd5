#ifndef BREEZE_CSQLITE_SHIM_H
#define BREEZE_CSQLITE_SHIM_H
#include <sqlite3.h>

/// SQLITE_TRANSIENT is a macro casting -1 to a function pointer; Swift cannot import it.
static inline sqlite3_destructor_type breeze_sqlite_transient(void) { return SQLITE_TRANSIENT; }
/// SQLITE_STATIC, for blobs bound only while their bytes are pinned.
static inline sqlite3_destructor_type breeze_sqlite_static(void) { return SQLITE_STATIC; }
#endif
