// TLS shim for the TLS layer (both roles): SSL_CTX_set_mode is a macro, which Swift cannot call.
#ifndef LK_TLS_H
#define LK_TLS_H

#include <openssl/ssl.h>

/// SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER, for non-blocking writes
/// from an output buffer that may grow or move between retries.
void lk_tls_ctx_set_nonblocking_modes(SSL_CTX *ctx);

#endif
