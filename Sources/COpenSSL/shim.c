#include "COpenSSL.h"

EVP_PKEY *lk_EVP_PKEY_from_ec_public_point(const char *group, const unsigned char *point, size_t len) {
    EVP_PKEY *pkey = NULL;
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL);
    OSSL_PARAM params[3];
    if (ctx == NULL) return NULL;
    params[0] = OSSL_PARAM_construct_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME, (char *)group, 0);
    params[1] = OSSL_PARAM_construct_octet_string(OSSL_PKEY_PARAM_PUB_KEY, (void *)point, len);
    params[2] = OSSL_PARAM_construct_end();
    if (EVP_PKEY_fromdata_init(ctx) != 1
        || EVP_PKEY_fromdata(ctx, &pkey, EVP_PKEY_PUBLIC_KEY, params) != 1) {
        EVP_PKEY_free(pkey);
        pkey = NULL;
    }
    EVP_PKEY_CTX_free(ctx);
    return pkey;
}

EVP_PKEY *lk_EVP_PKEY_from_rsa_public(const unsigned char *modulus, size_t modulus_len,
                                      const unsigned char *exponent, size_t exponent_len) {
    EVP_PKEY *pkey = NULL;
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, "RSA", NULL);
    OSSL_PARAM_BLD *builder = OSSL_PARAM_BLD_new();
    BIGNUM *n = BN_bin2bn(modulus, (int)modulus_len, NULL);
    BIGNUM *e = BN_bin2bn(exponent, (int)exponent_len, NULL);
    OSSL_PARAM *params = NULL;
    int made = ctx != NULL && builder != NULL && n != NULL && e != NULL
        && OSSL_PARAM_BLD_push_BN(builder, OSSL_PKEY_PARAM_RSA_N, n) == 1
        && OSSL_PARAM_BLD_push_BN(builder, OSSL_PKEY_PARAM_RSA_E, e) == 1
        && (params = OSSL_PARAM_BLD_to_param(builder)) != NULL
        && EVP_PKEY_fromdata_init(ctx) == 1
        && EVP_PKEY_fromdata(ctx, &pkey, EVP_PKEY_PUBLIC_KEY, params) == 1;
    if (!made) {
        EVP_PKEY_free(pkey);
        pkey = NULL;
    }
    OSSL_PARAM_free(params);
    BN_free(e);
    BN_free(n);
    OSSL_PARAM_BLD_free(builder);
    EVP_PKEY_CTX_free(ctx);
    return pkey;
}

EVP_MAC_CTX *lk_hmac_prepare(const char *digest, const unsigned char *key, size_t len) {
    EVP_MAC *mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
    EVP_MAC_CTX *ctx = mac == NULL ? NULL : EVP_MAC_CTX_new(mac);
    OSSL_PARAM params[2];
    EVP_MAC_free(mac);  // the context holds its own reference
    if (ctx == NULL) return NULL;
    params[0] = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, (char *)digest, 0);
    params[1] = OSSL_PARAM_construct_end();
    if (EVP_MAC_init(ctx, key, len, params) != 1) {
        EVP_MAC_CTX_free(ctx);
        return NULL;
    }
    return ctx;
}

EVP_PKEY *lk_EVP_EC_gen(const char *curve) { return EVP_EC_gen(curve); }

void lk_OPENSSL_free(void *addr) { OPENSSL_free(addr); }

int lk_SSL_CTX_set_min_proto_version(SSL_CTX *ctx, int version) {
    return (int)SSL_CTX_set_min_proto_version(ctx, version);
}

int lk_SSL_set_tlsext_host_name(SSL *ssl, const char *name) {
    return (int)SSL_set_tlsext_host_name(ssl, name);
}

// Runs when the program loads, before any other OpenSSL call (the first initialisation wins):
// no at-exit OPENSSL_cleanup. Freeing OpenSSL's global state in `exit` while another thread is
// still ending (running OpenSSL's per-thread destructor) was a double free or a use after free.
// Latchkey joins its threads before exiting; this is the second guard, and the kernel frees
// the memory anyway.
__attribute__((constructor)) static void lk_openssl_init_without_atexit(void) {
    OPENSSL_init_crypto(OPENSSL_INIT_NO_ATEXIT, NULL);
}
