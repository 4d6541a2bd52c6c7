int lk_openssl_placeholder(void);
