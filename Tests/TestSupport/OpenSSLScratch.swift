import Foundation

/// The `openssl` command line in a scratch directory of its own (removed in deinit), for tests
/// that need RSA keys, certificates and chains Secrets cannot make. Files are named, not pathed.
public final class OpenSSLScratch: Sendable {
    public enum KeyKind: Sendable {
        case p256
        case rsa(bits: Int)
    }

    public let directory: String

    public init() throws {
        directory = NSTemporaryDirectory() + "latchkey-openssl-\(getpid())-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }

    public func path(_ name: String) -> String { "\(directory)/\(name)" }

    public func write(_ bytes: [UInt8], to name: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: path(name)))
    }

    public func read(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: path(name))))
    }

    /// Runs `openssl arguments` in the directory; what it printed on stdout.
    @discardableResult
    public func run(_ arguments: [String]) throws -> [UInt8] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["openssl"] + arguments
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let printed = output.fileHandleForReading.readDataToEndOfFile()
        let complaint = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw TestFailure("openssl \(arguments.joined(separator: " ")) failed: \(String(decoding: complaint, as: UTF8.self))")
        }
        return Array(printed)
    }

    /// A new private key in `name` (PEM).
    public func makeKey(_ name: String, _ kind: KeyKind) throws {
        switch kind {
        case .p256: try run(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", name])
        case .rsa(let bits): try run(["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:\(bits)", "-out", name])
        }
    }

    /// The public half of the key in `key` as DER SubjectPublicKeyInfo.
    public func publicKeyDER(_ key: String) throws -> [UInt8] {
        try run(["pkey", "-in", key, "-pubout", "-outform", "DER"])
    }

    /// The uncompressed P-256 point of the key in `key`: the last 65 bytes of its SubjectPublicKeyInfo.
    public func p256Point(_ key: String) throws -> [UInt8] {
        Array(try publicKeyDER(key).suffix(65))
    }

    /// The big-endian modulus of the RSA key in `key` (its exponent is genpkey's 65537).
    public func rsaModulus(_ key: String) throws -> [UInt8] {
        let text = String(decoding: try run(["rsa", "-in", key, "-noout", "-modulus"]), as: UTF8.self)
        guard let hex = text.split(separator: "=").last?.trimmingCharacters(in: .whitespacesAndNewlines), hex.count % 2 == 0 else {
            throw TestFailure("openssl printed no modulus")
        }
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            guard let byte = UInt8(hex[index..<next], radix: 16) else { throw TestFailure("openssl printed a modulus that is not hex") }
            bytes.append(byte)
            index = next
        }
        return bytes
    }

    /// `openssl dgst -sha256 -sign`: ECDSA (DER) or PKCS#1 v1.5 by the key's kind; `options` are
    /// `-sigopt` values such as "rsa_padding_mode:pss".
    public func sign(_ message: [UInt8], with key: String, options: [String] = []) throws -> [UInt8] {
        try write(message, to: "message.bin")
        return try run(["dgst", "-sha256", "-sign", key] + options.flatMap { ["-sigopt", $0] } + ["message.bin"])
    }

    /// A self-signed CA certificate `name`.pem for the key in `key`, valid for `days` from now.
    public func makeRoot(_ name: String, key: String, subject: String, days: Int = 2) throws -> [UInt8] {
        try run([
            "req", "-x509", "-new", "-key", key, "-subj", subject, "-days", String(days), "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign,cRLSign", "-out", "\(name).pem",
        ])
        return try der(of: "\(name).pem")
    }

    /// A certificate `name`.pem for the key in `key`, signed by `issuer`.pem with `issuerKey`,
    /// with `extensions` (openssl's configuration lines; none makes an X.509 v1 certificate).
    public func makeCertificate(
        _ name: String, key: String, subject: String, issuer: String, issuerKey: String, extensions: [String], days: Int = 1
    ) throws -> [UInt8] {
        try run(["req", "-new", "-key", key, "-subj", subject, "-out", "\(name).csr"])
        var arguments = [
            "x509", "-req", "-in", "\(name).csr", "-CA", "\(issuer).pem", "-CAkey", issuerKey,
            "-set_serial", String(UInt32.random(in: 1...UInt32.max)), "-days", String(days), "-sha256", "-out", "\(name).pem",
        ]
        if !extensions.isEmpty {
            try write(Array(extensions.joined(separator: "\n").appending("\n").utf8), to: "\(name).ext")
            arguments += ["-extfile", "\(name).ext"]
        }
        try run(arguments)
        return try der(of: "\(name).pem")
    }

    public func der(of certificate: String) throws -> [UInt8] {
        try run(["x509", "-in", certificate, "-outform", "DER"])
    }
}
