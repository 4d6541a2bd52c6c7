#include "lk_tls.h"

int lk_tls_ctx_require_tls12(SSL_CTX *ctx) {
    return (int)SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
}

void lk_tls_ctx_set_nonblocking_modes(SSL_CTX *ctx) {
    SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
}

unsigned long lk_tls_take_error(char *buffer, size_t length) {
    unsigned long code = ERR_get_error();
    if (length > 0) {
        buffer[0] = 0;
        if (code != 0) ERR_error_string_n(code, buffer, length);
    }
    ERR_clear_error();
    return code;
}
