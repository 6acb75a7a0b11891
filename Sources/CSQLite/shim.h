#ifndef SWELL_CSQLITE_SHIM_H
#define SWELL_CSQLITE_SHIM_H
#include <sqlite3.h>

/// SQLITE_TRANSIENT is a cast macro Swift cannot import: SQLite copies the bound value.
static inline sqlite3_destructor_type swell_sqlite_transient(void) {
    return SQLITE_TRANSIENT;
}

/// sqlite3_db_config is variadic: the integer-flag form, typed.
static inline int swell_sqlite_db_config_int(sqlite3 *db, int op, int value, int *result) {
    return sqlite3_db_config(db, op, value, result);
}

#endif
