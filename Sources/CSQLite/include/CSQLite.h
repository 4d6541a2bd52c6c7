int lk_sqlite_placeholder(void);
