int lk_sqlite_placeholder(void) { return 0; }
