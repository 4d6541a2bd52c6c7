#include "CSQLite.h"

static const char lk_empty = 0;

// Why: SQLITE_TRANSIENT ((sqlite3_destructor_type)-1) is a macro Swift cannot import;
// an empty Swift string may hand us NULL, which SQLite would store as NULL, not ''.
int lk_sqlite3_bind_text_transient(sqlite3_stmt *stmt, int index, const char *text, int length) {
    return sqlite3_bind_text(stmt, index, text ? text : &lk_empty, length, SQLITE_TRANSIENT);
}

// Why: same macro; an empty [UInt8] may hand us NULL, which SQLite would store as NULL, not X''.
int lk_sqlite3_bind_blob_transient(sqlite3_stmt *stmt, int index, const void *bytes, int length) {
    return sqlite3_bind_blob(stmt, index, bytes ? bytes : &lk_empty, length, SQLITE_TRANSIENT);
}

int lk_sqlite3_disable_memory_statistics(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}
