import Foundation

/// Certificates made once per test process with the `openssl` command line, for the TLS tests of
/// the TLS layer, the gateway's doors and both clients. A root CA signs an intermediate, which
/// signs `valid`; everything else is a way a certificate can be wrong.
public final class TestCertificates: Sendable {
    public struct Pair: Sendable {
        /// PEM certificate, followed by its chain where it has one.
        public let certificate: String
        public let key: String

        public init(certificate: String, key: String) {
            self.certificate = certificate
            self.key = key
        }
    }

    /// The root CA alone: what a client trusts.
    public let authority: String
    /// DNS:localhost, IP:127.0.0.1 and IP:::1, served with its intermediate; a day to live.
    public let valid: Pair
    /// The same names, signed by the root, valid only during 1 January 2020.
    public let expired: Pair
    /// The same names, signed by its own key: trusted only when given as the CA file.
    public let selfSigned: Pair
    /// DNS:other.example only, signed by the root.
    public let otherHost: Pair
    /// Spells 127.0.0.1 as a DNS name and as the common name, but has no IP address entry.
    public let addressAsName: Pair

    /// A client expecting `peer` and trusting `trusted` must refuse `served`, for `reason`
    /// (OpenSSL's words for it).
    public struct Refusal: Sendable {
        public let peer: String
        public let served: Pair
        public let trusted: String?
        public let reason: String
    }

    /// Every way a certificate can be wrong for a client, by host name and by IP address.
    public var refusals: [Refusal] {
        [
            Refusal(peer: "localhost", served: otherHost, trusted: authority, reason: "hostname mismatch"),
            Refusal(peer: "127.0.0.1", served: otherHost, trusted: authority, reason: "IP address mismatch"),
            Refusal(peer: "127.0.0.1", served: addressAsName, trusted: authority, reason: "IP address mismatch"),
            Refusal(peer: "localhost", served: expired, trusted: authority, reason: "expired"),
            Refusal(peer: "127.0.0.1", served: expired, trusted: authority, reason: "expired"),
            Refusal(peer: "localhost", served: selfSigned, trusted: authority, reason: "self"),
            Refusal(peer: "localhost", served: valid, trusted: nil, reason: "local issuer"),
        ]
    }

    /// The certificates of this test process (made on first use, removed at exit).
    public static func shared() throws -> TestCertificates { try made.get() }

    private static let made = Result { try TestCertificates(directory: NSTemporaryDirectory() + "latchkey-tls-\(getpid())") }

    private init(directory: String) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(atPath: NSTemporaryDirectory() + "latchkey-tls-\(getpid())") }
        let maker = Maker(directory: directory)
        authority = try maker.selfSigned("root", subject: "/CN=Latchkey Test Root", extensions: ["basicConstraints=critical,CA:TRUE", "keyUsage=critical,keyCertSign,cRLSign"]).certificate
        let intermediate = try maker.signed("intermediate", subject: "/CN=Latchkey Test Intermediate", by: "root", extensions: "basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign")
        let names = "subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1"
        let leaf = try maker.signed("valid", subject: "/CN=localhost", by: "intermediate", extensions: names)
        let chain = directory + "/valid-chain.pem"
        try (String(contentsOfFile: leaf.certificate, encoding: .utf8) + String(contentsOfFile: intermediate.certificate, encoding: .utf8)).write(toFile: chain, atomically: true, encoding: .utf8)
        valid = Pair(certificate: chain, key: leaf.key)
        expired = try maker.expired("expired", subject: "/CN=localhost", by: "root", extensions: names)
        selfSigned = try maker.selfSigned("self-signed", subject: "/CN=localhost", extensions: [names])
        otherHost = try maker.signed("other-host", subject: "/CN=other.example", by: "root", extensions: "subjectAltName=DNS:other.example")
        addressAsName = try maker.signed("address-as-name", subject: "/CN=127.0.0.1", by: "root", extensions: "subjectAltName=DNS:127.0.0.1")
    }
}

/// The `openssl` invocations behind `TestCertificates`: P-256 keys, SHA-256 signatures.
private struct Maker {
    let directory: String

    func path(_ name: String, _ suffix: String) -> String { "\(directory)/\(name).\(suffix)" }

    func selfSigned(_ name: String, subject: String, extensions: [String]) throws -> TestCertificates.Pair {
        try openssl(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2", "-subj", subject]
            + extensions.flatMap { ["-addext", $0] } + ["-keyout", path(name, "key"), "-out", path(name, "pem")])
        return TestCertificates.Pair(certificate: path(name, "pem"), key: path(name, "key"))
    }

    func signed(_ name: String, subject: String, by issuer: String, extensions: String) throws -> TestCertificates.Pair {
        try request(name, subject: subject, extensions: extensions)
        try openssl([
            "x509", "-req", "-in", path(name, "csr"), "-CA", path(issuer, "pem"), "-CAkey", path(issuer, "key"), "-set_serial", String(UInt32.random(in: 1...UInt32.max)),
            "-days", "1", "-sha256", "-extfile", path(name, "ext"), "-out", path(name, "pem"),
        ])
        return TestCertificates.Pair(certificate: path(name, "pem"), key: path(name, "key"))
    }

    /// `openssl x509` cannot date a certificate in the past; `openssl ca` can, given a database.
    func expired(_ name: String, subject: String, by issuer: String, extensions: String) throws -> TestCertificates.Pair {
        try request(name, subject: subject, extensions: extensions)
        let database = directory + "/ca-database"
        try FileManager.default.createDirectory(atPath: database, withIntermediateDirectories: true)
        try "".write(toFile: database + "/index.txt", atomically: true, encoding: .utf8)
        try "01\n".write(toFile: database + "/serial", atomically: true, encoding: .utf8)
        let configuration = """
            [ca]
            default_ca = test
            [test]
            database = \(database)/index.txt
            serial = \(database)/serial
            new_certs_dir = \(database)
            default_md = sha256
            policy = any
            unique_subject = no
            [any]
            commonName = supplied
            """
        try configuration.write(toFile: path(name, "cnf"), atomically: true, encoding: .utf8)
        try openssl([
            "ca", "-batch", "-config", path(name, "cnf"), "-cert", path(issuer, "pem"), "-keyfile", path(issuer, "key"), "-in", path(name, "csr"),
            "-startdate", "20200101000000Z", "-enddate", "20200102000000Z", "-extfile", path(name, "ext"), "-out", path(name, "pem"),
        ])
        return TestCertificates.Pair(certificate: path(name, "pem"), key: path(name, "key"))
    }

    private func request(_ name: String, subject: String, extensions: String) throws {
        try (extensions + "\n").write(toFile: path(name, "ext"), atomically: true, encoding: .utf8)
        try openssl(["req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj", subject, "-keyout", path(name, "key"), "-out", path(name, "csr")])
    }

    private func openssl(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["openssl"] + arguments
        process.standardOutput = FileHandle.nullDevice
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let text = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw CertificateError("openssl \(arguments.first ?? "") failed: \(String(decoding: text, as: UTF8.self))")
        }
    }
}

public struct CertificateError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
