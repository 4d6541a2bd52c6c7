// TLS shims: OpenSSL's SSL_CTX_set_min_proto_version, SSL_CTX_set_mode and friends are macros,
// which Swift cannot call; these wrap them. Added for the gateway's TLS listener.
#ifndef LK_TLS_H
#define LK_TLS_H

#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/evp.h>

/// SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION). Returns 1 on success.
int lk_tls_ctx_require_tls12(SSL_CTX *ctx);
/// SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER, for non-blocking writes
/// from a buffer that may grow or move between retries.
void lk_tls_ctx_set_nonblocking_modes(SSL_CTX *ctx);
/// The text of the oldest error on this thread's OpenSSL queue (0 when empty), clearing the queue.
unsigned long lk_tls_take_error(char *buffer, size_t length);

#endif
