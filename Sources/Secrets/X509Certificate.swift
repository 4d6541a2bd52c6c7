import COpenSSL

/// Owns an X509 and frees it in deinit. Read-only after `X509Certificate.init`, which has
/// OpenSSL cache the extensions (the one lazy write), so threads may share it.
final class X509Handle: @unchecked Sendable {
    let pointer: OpaquePointer

    init(taking pointer: OpaquePointer) { self.pointer = pointer }

    deinit { X509_free(pointer) }
}

/// An X.509 certificate, for WebAuthn attestation statements (x5c) and their roots.
public struct X509Certificate: Sendable {
    /// How a signature made with the certificate's key is checked.
    public enum SignatureAlgorithm: Sendable {
        /// ECDSA P-256 over SHA-256, DER-encoded signature (COSE ES256).
        case ecdsaP256SHA256
        /// RSASSA-PKCS1-v1_5 over SHA-256 (COSE RS256).
        case rsaPKCS1SHA256
    }

    /// The certificate's subject public key, when it is one of the two kinds Secrets verifies.
    enum SubjectKey: Sendable {
        case p256(P256PublicKey)
        case rsa(RSAPublicKey)
        case unsupported
    }

    public let der: [UInt8]
    /// X509_get_version: 0-based, so a v3 certificate answers 2.
    public let version: Int
    /// The subject's C, O, OU and CN by short name. A field the subject holds more than once is
    /// left out (which one counts would be a guess), and so is one that is not valid text.
    public let subjectFields: [String: String]
    /// Whether basicConstraints says CA:TRUE.
    public let isCertificateAuthority: Bool
    let handle: X509Handle
    let subjectKey: SubjectKey

    /// Refuses what d2i_X509 refuses, trailing bytes, extensions OpenSSL finds invalid, and an
    /// extension present twice (RFC 5280 §4.2).
    public init(der: [UInt8]) throws(SecretsError) {
        var consumed = 0
        let parsed = withBytes(der) { bytes, count -> OpaquePointer? in
            var cursor: UnsafePointer<UInt8>? = bytes
            let certificate = d2i_X509(nil, &cursor, count)
            consumed = cursor.map { $0 - bytes } ?? 0
            return certificate
        }
        guard let raw = parsed else { throw SecretsError.openSSL("X.509: not a DER certificate") }
        let handle = X509Handle(taking: raw)
        guard consumed == der.count else { throw SecretsError("X.509: bytes after the certificate") }
        let flags = X509_get_extension_flags(raw)
        guard flags & UInt32(EXFLAG_INVALID) == 0, !Self.hasRepeatedExtension(raw) else {
            ERR_clear_error()
            throw SecretsError("X.509: invalid or repeated extensions")
        }
        self.der = der
        self.handle = handle
        version = X509_get_version(raw)
        subjectFields = Self.subjectFields(of: raw)
        isCertificateAuthority = flags & UInt32(EXFLAG_CA) != 0
        subjectKey = Self.subjectKey(of: raw)
    }

    /// One PEM `CERTIFICATE` block.
    public init(pem: String) throws(SecretsError) {
        guard let der = PEM.decode(pem, label: "CERTIFICATE") else {
            throw SecretsError("X.509: not one PEM CERTIFICATE block")
        }
        try self.init(der: der)
    }

    /// The uncompressed point 0x04 || X || Y when the subject key is P-256, else nil.
    public var publicKeyX963: [UInt8]? {
        if case .p256(let key) = subjectKey { return key.x963 }
        return nil
    }

    /// Whether `signature` over `message` verifies with the certificate's public key, which must
    /// be of the algorithm's kind (P-256 for ECDSA, RSA of 2048 to 8192 bits for PKCS#1).
    public func isValidSignature(_ signature: [UInt8], for message: [UInt8], algorithm: SignatureAlgorithm) -> Bool {
        switch (algorithm, subjectKey) {
        case (.ecdsaP256SHA256, .p256(let key)): return key.isValidSignature(der: signature, for: message)
        case (.rsaPKCS1SHA256, .rsa(let key)): return key.isValidPKCS1SHA256Signature(signature, for: message)
        default: return false
        }
    }

    /// Whether the certificate's key is of the kind `algorithm` signs with.
    public func hasKey(for algorithm: SignatureAlgorithm) -> Bool {
        switch (algorithm, subjectKey) {
        case (.ecdsaP256SHA256, .p256), (.rsaPKCS1SHA256, .rsa): true
        default: false
        }
    }

    /// The DER contents of the extension's extnValue OCTET STRING, for `oid` in dotted form
    /// ("1.3.6.1.4.1.45724.1.1.4"); nil when the certificate has no such extension.
    public func extensionValue(oid: String) -> [UInt8]? {
        guard let found = certificateExtension(oid: oid), let value = X509_EXTENSION_get_data(found) else { return nil }
        let length = Int(ASN1_STRING_length(value))
        guard length > 0, let bytes = ASN1_STRING_get0_data(value) else { return [] }
        return Array(UnsafeBufferPointer(start: bytes, count: length))
    }

    /// Whether the certificate has the extension `oid` marked critical.
    public func isCriticalExtension(oid: String) -> Bool {
        guard let found = certificateExtension(oid: oid) else { return false }
        return X509_EXTENSION_get_critical(found) == 1
    }

    /// The extension `oid` (dotted form only); the certificate holds it, and at most once.
    private func certificateExtension(oid: String) -> OpaquePointer? {
        guard let object = OBJ_txt2obj(oid, 1) else {
            ERR_clear_error()
            return nil
        }
        defer { ASN1_OBJECT_free(object) }
        let index = X509_get_ext_by_OBJ(handle.pointer, object, -1)
        return index >= 0 ? X509_get_ext(handle.pointer, index) : nil
    }

    private static func hasRepeatedExtension(_ certificate: OpaquePointer) -> Bool {
        let objects = (0..<X509_get_ext_count(certificate)).map { X509_EXTENSION_get_object(X509_get_ext(certificate, $0)) }
        return objects.indices.contains { index in objects[..<index].contains { OBJ_cmp($0, objects[index]) == 0 } }
    }

    private static let subjectFieldNames: [Int32: String] = [
        NID_countryName: "C", NID_organizationName: "O", NID_organizationalUnitName: "OU", NID_commonName: "CN",
    ]

    private static func subjectFields(of certificate: OpaquePointer) -> [String: String] {
        guard let name = X509_get_subject_name(certificate) else { return [:] }
        var fields: [String: String] = [:]
        var leftOut: Set<String> = []
        for index in 0..<X509_NAME_entry_count(name) {
            guard let entry = X509_NAME_get_entry(name, index),
                let field = subjectFieldNames[OBJ_obj2nid(X509_NAME_ENTRY_get_object(entry))]
            else { continue }
            var text: UnsafeMutablePointer<UInt8>?
            let length = ASN1_STRING_to_UTF8(&text, X509_NAME_ENTRY_get_data(entry))
            guard length >= 0, let text else {
                ERR_clear_error()
                leftOut.insert(field)
                continue
            }
            defer { lk_OPENSSL_free(text) }
            let value = String(decoding: UnsafeBufferPointer(start: text, count: Int(length)), as: UTF8.self)
            if fields.updateValue(value, forKey: field) != nil { leftOut.insert(field) }
        }
        for field in leftOut { fields[field] = nil }
        return fields
    }

    private static func subjectKey(of certificate: OpaquePointer) -> SubjectKey {
        guard let key = X509_get0_pubkey(certificate) else {
            ERR_clear_error()
            return .unsupported
        }
        do {
            switch EVP_PKEY_get_base_id(key) {
            case EVP_PKEY_EC:
                guard groupName(of: key) == "prime256v1",
                    let x = bigNumber(of: key, OSSL_PKEY_PARAM_EC_PUB_X, padTo: 32),
                    let y = bigNumber(of: key, OSSL_PKEY_PARAM_EC_PUB_Y, padTo: 32)
                else { return .unsupported }
                return .p256(try P256PublicKey(x963: [0x04] + x + y))
            case EVP_PKEY_RSA:
                guard let n = bigNumber(of: key, OSSL_PKEY_PARAM_RSA_N), let e = bigNumber(of: key, OSSL_PKEY_PARAM_RSA_E) else {
                    return .unsupported
                }
                return .rsa(try RSAPublicKey(modulus: n, exponent: e))
            default:
                return .unsupported
            }
        } catch {
            return .unsupported
        }
    }

    private static func groupName(of key: OpaquePointer) -> String? {
        var name = [CChar](repeating: 0, count: 64)
        var length = 0
        guard EVP_PKEY_get_utf8_string_param(key, OSSL_PKEY_PARAM_GROUP_NAME, &name, name.count, &length) == 1 else {
            ERR_clear_error()
            return nil
        }
        return String(decoding: name.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// A key parameter as big-endian bytes: minimal, or left-padded to `padTo` bytes.
    private static func bigNumber(of key: OpaquePointer, _ parameter: String, padTo width: Int? = nil) -> [UInt8]? {
        var number: OpaquePointer?
        guard EVP_PKEY_get_bn_param(key, parameter, &number) == 1, let number else {
            ERR_clear_error()
            return nil
        }
        defer { BN_free(number) }
        let count = width ?? (Int(BN_num_bits(number)) + 7) / 8
        var bytes = [UInt8](repeating: 0, count: count)
        guard BN_bn2binpad(number, &bytes, Int32(count)) == Int32(count) else { return nil }
        return bytes
    }
}
