int lk_openssl_placeholder(void);
#include "lk_tls.h"
