import COpenSSL

/// scrypt cost parameters: N = 2^logN, block size r, parallelism p.
public struct ScryptParameters: Sendable, Equatable {
    public var logN: Int
    public var r: Int
    public var p: Int

    public init(logN: Int, r: Int, p: Int) {
        self.logN = logN
        self.r = r
        self.p = p
    }

    /// N = 2^15, r = 8, p = 1: 32 MiB and tens of milliseconds per hash.
    public static let interactive = ScryptParameters(logN: 15, r: 8, p: 1)

    /// Largest memory accepted for the N·r table: 128·r·N bytes ≤ 512 MiB.
    public static let maximumMemory = 512 << 20
    /// Largest r·p accepted.
    public static let maximumRP = 256
    /// Largest total work accepted, N·r·p ≤ 2^24 (64 times `.interactive`).
    public static let maximumWork = 1 << 24

    /// Whether hashing or verifying with these parameters is allowed: logN in 1...22, r ≥ 1,
    /// p ≥ 1, r·p ≤ 256, memory and work within the limits above. Parameters read from a stored
    /// hash are checked first, so a tampered or absurd hash cannot make us allocate gigabytes
    /// or spin for minutes.
    public var isWithinLimits: Bool {
        guard (1...22).contains(logN), r >= 1, p >= 1,
              r <= Self.maximumRP, p <= Self.maximumRP, r * p <= Self.maximumRP else { return false }
        let n = 1 << logN
        return 128 * r * n <= Self.maximumMemory && n * r * p <= Self.maximumWork
    }

    /// The `maxmem` OpenSSL needs: its check is 128·r·(N + 2) + 128·r·p ≤ maxmem.
    var requiredMemory: UInt64 {
        UInt64(128 * r * ((1 << logN) + 2) + 128 * r * p)
    }
}

/// Raw scrypt (RFC 7914) through OpenSSL's EVP_PBE_scrypt.
public enum Scrypt {
    /// Derives `length` bytes (1...1024). Throws for parameters outside `isWithinLimits`.
    public static func derive(password: [UInt8], salt: [UInt8], parameters: ScryptParameters,
                              length: Int) throws(SecretsError) -> [UInt8] {
        guard parameters.isWithinLimits else {
            throw SecretsError("scrypt: parameters outside the accepted limits")
        }
        guard (1...1024).contains(length) else {
            throw SecretsError("scrypt: derived length must be 1...1024 bytes")
        }
        var key = [UInt8](repeating: 0, count: length)
        let rc = withBytes(password) { pass, passCount in
            withBytes(salt) { saltPointer, saltCount in
                key.withUnsafeMutableBufferPointer { out in
                    EVP_PBE_scrypt(
                        UnsafeRawPointer(pass).assumingMemoryBound(to: CChar.self), passCount,
                        saltPointer, saltCount,
                        UInt64(1) << UInt64(parameters.logN), UInt64(parameters.r), UInt64(parameters.p),
                        parameters.requiredMemory + 4096,
                        out.baseAddress, out.count)
                }
            }
        }
        guard rc == 1 else {
            secureWipe(&key)
            throw SecretsError.openSSL("scrypt: EVP_PBE_scrypt failed")
        }
        return key
    }
}

/// Password hashing with scrypt, stored as PHC strings:
/// `$scrypt$ln=15,r=8,p=1$<salt>$<hash>` (standard base64 alphabet, no padding; 16-byte random
/// salt, 32-byte hash). Passwords are taken as their UTF-8 bytes, unnormalised.
///
/// Unknown users: `verify` against `unmatchableHash(parameters:)` made with the current
/// parameters, so that a login for a missing account costs the same work as a real one.
///
/// All of these are slow on purpose (tens of milliseconds): run them off the event loop.
public enum PasswordHasher {
    static let saltLength = 16
    static let hashLength = 32

    public static func hash(_ password: String, parameters: ScryptParameters = .interactive)
        throws(SecretsError) -> String {
        var passwordBytes = Array(password.utf8)
        defer { secureWipe(&passwordBytes) }
        var salt = SecureRandom.bytes(saltLength)
        defer { secureWipe(&salt) }
        var derived = try Scrypt.derive(password: passwordBytes, salt: salt, parameters: parameters,
                                        length: hashLength)
        defer { secureWipe(&derived) }
        return format(parameters: parameters, salt: salt, hash: derived)
    }

    /// True only if `phc` is a well-formed scrypt PHC string within the limits and `password`
    /// derives the same hash (compared in constant time). Anything malformed is false.
    public static func verify(_ password: String, against phc: String) -> Bool {
        guard var parsed = parse(phc) else { return false }
        defer {
            secureWipe(&parsed.salt)
            secureWipe(&parsed.hash)
        }
        var passwordBytes = Array(password.utf8)
        defer { secureWipe(&passwordBytes) }
        guard var derived = try? Scrypt.derive(password: passwordBytes, salt: parsed.salt,
                                               parameters: parsed.parameters,
                                               length: parsed.hash.count) else { return false }
        defer { secureWipe(&derived) }
        return constantTimeEquals(derived, parsed.hash)
    }

    /// A well-formed hash with `parameters` that no password matches: a random salt and 32
    /// random bytes that no derivation produced. `verify` against it does exactly the work of a
    /// real verify (the parse, the same scrypt, the constant-time compare) and answers false, so
    /// an unknown user costs what a known one does. Made without running scrypt: a process pays
    /// nothing for it at start. Throws for parameters outside `isWithinLimits`, which `verify`
    /// would refuse at once (and so answer faster).
    public static func unmatchableHash(parameters: ScryptParameters = .interactive) throws(SecretsError) -> String {
        guard parameters.isWithinLimits else { throw SecretsError("scrypt: parameters outside the accepted limits") }
        return format(parameters: parameters, salt: SecureRandom.bytes(saltLength), hash: SecureRandom.bytes(hashLength))
    }

    /// True when `phc` should be replaced at the next successful login: it does not parse, or
    /// its parameters differ from `current` (stronger or weaker), or its salt or hash length
    /// is not what `hash` makes today.
    public static func needsRehash(_ phc: String, current: ScryptParameters) -> Bool {
        guard let parsed = parse(phc) else { return true }
        return parsed.parameters != current
            || parsed.salt.count != saltLength || parsed.hash.count != hashLength
    }

    // MARK: PHC string form

    struct Parsed {
        var parameters: ScryptParameters
        var salt: [UInt8]
        var hash: [UInt8]
    }

    static func format(parameters: ScryptParameters, salt: [UInt8], hash: [UInt8]) -> String {
        "$scrypt$ln=\(parameters.logN),r=\(parameters.r),p=\(parameters.p)$"
            + Base64Codec.encode(salt, alphabet: Base64Codec.standard, padding: false) + "$"
            + Base64Codec.encode(hash, alphabet: Base64Codec.standard, padding: false)
    }

    /// Strict parser: exactly `$scrypt$ln=<d>,r=<d>,p=<d>$<salt>$<hash>`, parameters in that
    /// order as plain decimals (no sign, no leading zeros), within `isWithinLimits`, salt 16...64
    /// bytes and hash 32...64 bytes in unpadded standard base64. (scrypt output is a prefix of
    /// longer output, so a shorter stored hash would still verify: hence the 32-byte floor.)
    static func parse(_ phc: String) -> Parsed? {
        let fields = phc.utf8.split(separator: UInt8(ascii: "$"), omittingEmptySubsequences: false)
        guard fields.count == 5, fields[0].isEmpty,
              fields[1].elementsEqual("scrypt".utf8) else { return nil }
        let pairs = fields[2].split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false)
        guard pairs.count == 3,
              let logN = number(pairs[0], name: "ln"),
              let r = number(pairs[1], name: "r"),
              let p = number(pairs[2], name: "p") else { return nil }
        let parameters = ScryptParameters(logN: logN, r: r, p: p)
        guard parameters.isWithinLimits,
              let salt = Base64Codec.decode(fields[3], alphabet: .standard, allowPadding: false),
              let hash = Base64Codec.decode(fields[4], alphabet: .standard, allowPadding: false),
              (16...64).contains(salt.count), (32...64).contains(hash.count) else { return nil }
        return Parsed(parameters: parameters, salt: salt, hash: hash)
    }

    private static func number(_ field: Substring.UTF8View.SubSequence, name: String) -> Int? {
        let bytes = Array(field)
        let prefix = Array(name.utf8) + [UInt8(ascii: "=")]
        guard bytes.count > prefix.count, bytes.count <= prefix.count + 6,
              bytes.starts(with: prefix) else { return nil }
        let digits = bytes[prefix.count...]
        guard digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
              digits.first != UInt8(ascii: "0") else { return nil }
        return digits.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
    }
}
