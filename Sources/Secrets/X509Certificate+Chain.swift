import COpenSSL

extension X509Certificate {
    /// Whether `leafFirst` (the leaf, then the certificates that may link it to an anchor)
    /// verifies up to one of `anchors` at `unixTime` (X509_verify_cert; every certificate's
    /// validity is judged at that time, not the clock's). Without an anchor it is refused.
    public static func chainIsValid(leafFirst: [X509Certificate], anchors: [X509Certificate], at unixTime: Int64) -> Bool {
        guard let leaf = leafFirst.first, !anchors.isEmpty else { return false }
        guard let store = X509_STORE_new() else { fatalOpenSSL("X.509: X509_STORE_new failed") }
        defer { X509_STORE_free(store) }
        for anchor in anchors where X509_STORE_add_cert(store, anchor.handle.pointer) != 1 {
            fatalOpenSSL("X.509: X509_STORE_add_cert failed")
        }
        guard let untrusted = OPENSSL_sk_new_null() else { fatalOpenSSL("X.509: OPENSSL_sk_new_null failed") }
        defer { OPENSSL_sk_free(untrusted) }  // the stack only; the certificates are the handles'
        for certificate in leafFirst.dropFirst() where OPENSSL_sk_push(untrusted, UnsafeRawPointer(certificate.handle.pointer)) == 0 {
            fatalOpenSSL("X.509: OPENSSL_sk_push failed")
        }
        guard let context = X509_STORE_CTX_new() else { fatalOpenSSL("X.509: X509_STORE_CTX_new failed") }
        defer { X509_STORE_CTX_free(context) }
        guard X509_STORE_CTX_init(context, store, leaf.handle.pointer, untrusted) == 1 else {
            fatalOpenSSL("X.509: X509_STORE_CTX_init failed")
        }
        // Sets X509_V_FLAG_USE_CHECK_TIME too.
        X509_VERIFY_PARAM_set_time(X509_STORE_CTX_get0_param(context), Int(unixTime))
        let verified = X509_verify_cert(context) == 1
        ERR_clear_error()
        return verified
    }
}
