int lk_openssl_placeholder(void) { return 0; }
