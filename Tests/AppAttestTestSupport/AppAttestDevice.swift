import Foundation
import Secrets
import WebAuthn

/// An iPhone's App Attest service in the test's own hands: a root and an intermediate CA in
/// Apple's structure (P-384), made once per process with the `openssl` command line, and per
/// device an App Attest key (P-256, in process) whose leaf certificates carry Apple's nonce
/// extension. Configure `rootPEM` as the App Attestation root to make the server believe it.
public final class AppAttestAuthority: @unchecked Sendable {
    public let rootPEM: String
    public let rootPath: String
    let directory: String
    private let lock = NSLock()
    private var serial = 0

    public static func shared() throws -> AppAttestAuthority { try made.get() }

    /// What a stack needs to require App Attest keys of `appID` under `root` (development
    /// environment); a missing root names a file that is not there, so the stack refuses to start.
    public static func requiringEnvironment(appID: String, root: AppAttestAuthority?) -> [String: String] {
        [
            "LATCHKEY_APP_ATTEST_APP_IDS": appID, "LATCHKEY_APP_ATTEST_ENVIRONMENT": "development",
            "LATCHKEY_APP_ATTEST_ROOT": root?.rootPath ?? "/nonexistent", "LATCHKEY_REQUIRE_APP_ATTEST": "true",
        ]
    }
    private static let made = Result { try AppAttestAuthority() }

    private init() throws {
        directory = NSTemporaryDirectory() + "latchkey-app-attest-\(getpid())"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(atPath: NSTemporaryDirectory() + "latchkey-app-attest-\(getpid())") }
        try Self.openssl(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:secp384r1", "-nodes", "-keyout", "root.key",
                          "-out", "root.pem", "-subj", "/CN=Test App Attestation Root CA/O=Latchkey Tests", "-days", "3650",
                          "-addext", "basicConstraints=critical,CA:true", "-addext", "keyUsage=critical,keyCertSign"], in: directory)
        try Self.openssl(["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:secp384r1", "-nodes", "-keyout", "ca.key", "-out", "ca.csr",
                          "-subj", "/CN=Test App Attestation CA 1/O=Latchkey Tests"], in: directory)
        try "basicConstraints=critical,CA:true,pathlen:0\nkeyUsage=critical,keyCertSign\n".write(toFile: directory + "/ca.ext", atomically: true, encoding: .utf8)
        try Self.openssl(["x509", "-req", "-in", "ca.csr", "-CA", "root.pem", "-CAkey", "root.key", "-CAcreateserial", "-days", "3650",
                          "-extfile", "ca.ext", "-out", "ca.pem"], in: directory)
        rootPath = directory + "/root.pem"
        rootPEM = try String(contentsOfFile: rootPath, encoding: .utf8)
    }

    /// A leaf for `key` whose nonce extension holds `nonce`, valid `days` from now, as DER.
    func leaf(for key: P256PublicKey, nonce: [UInt8], days: Int) throws -> [UInt8] {
        lock.lock()
        serial += 1
        let name = "leaf-\(serial)"
        lock.unlock()
        // A P-256 SubjectPublicKeyInfo is a fixed header before the X9.63 point.
        let spki = [UInt8](Hex.decode("3059301306072a8648ce3d020106082a8648ce3d030107034200")!) + key.x963
        let pem = "-----BEGIN PUBLIC KEY-----\n\(Data(spki).base64EncodedString(options: .lineLength64Characters))\n-----END PUBLIC KEY-----\n"
        try pem.write(toFile: "\(directory)/\(name).pub", atomically: true, encoding: .utf8)
        try "1.2.840.113635.100.8.2=DER:3024A1220420\(Hex.encode(nonce))\n".write(toFile: "\(directory)/\(name).ext", atomically: true, encoding: .utf8)
        try Self.openssl(["x509", "-new", "-force_pubkey", "\(name).pub", "-subj", "/CN=\(Hex.encode(SHA256.hash(key.x963)))/O=Apple Inc.",
                          "-CA", "ca.pem", "-CAkey", "ca.key", "-days", "\(days)", "-extfile", "\(name).ext", "-outform", "DER", "-out", "\(name).der"],
                         in: directory)
        return [UInt8](try Data(contentsOf: URL(fileURLWithPath: "\(directory)/\(name).der")))
    }

    var intermediateDER: [UInt8] {
        get throws {
            let pem = try String(contentsOfFile: directory + "/ca.pem", encoding: .utf8)
            return try X509Certificate(pem: pem).der
        }
    }

    private static func openssl(_ arguments: [String], in directory: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        process.standardOutput = FileHandle.nullDevice
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw AppAttestTestError("openssl \(arguments.first ?? ""): \(text)") }
    }
}

/// One install of the app on one device: its App Attest key, attestations and assertions as
/// `DCAppAttestService` makes them.
public final class AppAttestDevice: @unchecked Sendable {
    public let appID: String
    public let environment: AppAttest.Environment
    private let key = P256PrivateKey()
    private let authority: AppAttestAuthority
    public private(set) var counter: UInt32 = 0

    public init(appID: String, environment: AppAttest.Environment = .development, authority: AppAttestAuthority) {
        self.appID = appID
        self.environment = environment
        self.authority = authority
    }

    /// The key id (`generateKey`): SHA-256 of the public key, base64.
    public var keyID: String { Data(SHA256.hash(key.publicKey.x963)).base64EncodedString() }

    /// `attestKey(keyID, clientDataHash:)`: the attestation object; `days` of validity for the leaf.
    public func attest(clientDataHash: [UInt8], days: Int = 3) throws -> [UInt8] {
        let keyID = SHA256.hash(key.publicKey.x963)
        let aaguid: [UInt8] = environment == .development
            ? Array("appattestdevelop".utf8) : Array("appattest".utf8) + [UInt8](repeating: 0, count: 7)
        let authenticatorData = SHA256.hash(appID) + [0x40, 0, 0, 0, 0] + aaguid + [0, 32] + keyID + COSEKey.encoding(p256: key.publicKey)
        let leaf = try authority.leaf(for: key.publicKey, nonce: SHA256.hash(authenticatorData + clientDataHash), days: days)
        return CBOREncoder.encode(.map([
            (.text("fmt"), .text("apple-appattest")),
            (.text("attStmt"), .map([(.text("x5c"), .array([.bytes(leaf), .bytes(try authority.intermediateDER)])), (.text("receipt"), .bytes([1, 2, 3]))])),
            (.text("authData"), .bytes(authenticatorData)),
        ]))
    }

    /// `generateAssertion(keyID, clientDataHash: SHA256(clientData))`, the counter one higher.
    public func assert(clientData: [UInt8]) -> [UInt8] {
        counter += 1
        let authenticatorData = SHA256.hash(appID) + [0x40] + (0..<4).reversed().map { UInt8(truncatingIfNeeded: counter >> (8 * UInt32($0))) }
        let signature = key.signature(for: SHA256.hash(authenticatorData + SHA256.hash(clientData)))
        return CBOREncoder.encode(.map([(.text("signature"), .bytes(signature)), (.text("authenticatorData"), .bytes(authenticatorData))]))
    }
}

public struct AppAttestTestError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
