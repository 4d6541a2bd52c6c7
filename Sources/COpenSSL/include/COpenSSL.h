// COpenSSL: the system OpenSSL 3 headers Swift needs, plus a few `lk_` shims for what Swift
// cannot call directly (function-like macros, varargs). Everything else is called from Swift as is.
#ifndef LATCHKEY_COPENSSL_H
#define LATCHKEY_COPENSSL_H

#include <stddef.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/kdf.h>
#include <openssl/param_build.h>
#include <openssl/params.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

// Builds a public-key-only EC EVP_PKEY from an encoded point via EVP_PKEY_fromdata: OSSL_PARAM
// keys must be static C strings (Swift passes temporaries) and EVP_PKEY_PUBLIC_KEY is a nested
// macro. Returns NULL (error queue set) for points OpenSSL refuses, e.g. off the curve.
EVP_PKEY *lk_EVP_PKEY_from_ec_public_point(const char *group, const unsigned char *point, size_t len);

// The same for an RSA public key from its big-endian modulus and exponent. NULL (error queue
// set) when OpenSSL refuses them.
EVP_PKEY *lk_EVP_PKEY_from_rsa_public(const unsigned char *modulus, size_t modulus_len,
                                      const unsigned char *exponent, size_t exponent_len);

// An HMAC context keyed once (OSSL_PARAM keys must be static C strings): `digest` is an OpenSSL
// digest name ("SHA256"). Each tag then starts from a copy of it (EVP_MAC_CTX_dup) instead of
// fetching the algorithm and setting the key up again. NULL (error queue set) on failure.
EVP_MAC_CTX *lk_hmac_prepare(const char *digest, const unsigned char *key, size_t len);

// EVP_EC_gen is a macro over the varargs EVP_PKEY_Q_keygen; generates an EC key on `curve`.
EVP_PKEY *lk_EVP_EC_gen(const char *curve);

// OPENSSL_free is a macro (it passes __FILE__/__LINE__ to CRYPTO_free).
void lk_OPENSSL_free(void *addr);

// SSL_CTX_set_min_proto_version is a macro over SSL_CTX_ctrl; returns 1 on success.
int lk_SSL_CTX_set_min_proto_version(SSL_CTX *ctx, int version);

// SSL_set_tlsext_host_name (SNI) is a macro over SSL_ctrl with a void* cast; returns 1 on success.
int lk_SSL_set_tlsext_host_name(SSL *ssl, const char *name);

// The TLS layer's extra shims (SSL_CTX_set_mode is a macro).
#include "lk_tls.h"

#endif
