#ifndef LK_CSQLITE_H
#define LK_CSQLITE_H

#include <sqlite3.h>

// SQLITE_TRANSIENT is a macro casting -1 to a function pointer; Swift cannot import it,
// so these wrappers bind text/blob with it (SQLite copies the bytes before returning).
int lk_sqlite3_bind_text_transient(sqlite3_stmt *stmt, int index, const char *text, int length);
int lk_sqlite3_bind_blob_transient(sqlite3_stmt *stmt, int index, const void *bytes, int length);

// sqlite3_config is variadic, which Swift cannot call. Turns off SQLite's memory statistics:
// with them on, every allocation SQLite makes takes one process-wide mutex. Only before SQLite
// is first used in the process; SQLITE_MISUSE after.
int lk_sqlite3_disable_memory_statistics(void);

#endif
