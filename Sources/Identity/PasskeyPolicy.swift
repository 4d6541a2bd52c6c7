import WebAuthn

/// Identity as a WebAuthn relying party: who it is, which origins may run its ceremonies, and
/// which attestations it takes.
public struct PasskeyPolicy: Sendable {
    /// The RP ID and the web origins (`--webauthn-rp-id`, `--webauthn-origins`), the accepted
    /// attestation formats and the trust anchor of Apple's anonymous attestation.
    public var relyingParty: RelyingParty
    /// The name authenticators show beside the account (`--webauthn-rp-name`).
    public var name: String
    /// How long a ceremony's challenge works, also the `timeout` the options give.
    public var ceremonySeconds: Int64 = 300
    public var maxPerUser = 10

    public init(relyingParty: RelyingParty, name: String) {
        self.relyingParty = relyingParty
        self.name = name
    }

    /// `localhost`, its native-app origin and nothing else: what `latchkey up` and the tests use
    /// until they are told their own.
    public static let development = PasskeyPolicy(
        relyingParty: RelyingParty(id: "localhost", origins: ["https://localhost"], allowedFormats: Set(AttestationFormat.allCases)),
        name: "Latchkey")

    /// `direct` only when some format beyond `none` is accepted: asking for an attestation that
    /// would be thrown away only makes browsers prompt for it.
    var attestationPreference: String { relyingParty.allowedFormats.subtracting([.none]).isEmpty ? "none" : "direct" }
}

/// Names of well-known passkey providers by AAGUID, for the user's list. Most synced passkeys
/// come from one of these; any other shows without a name.
enum KnownAuthenticators {
    static let names: [String: String] = [
        "fbfc3007-154e-4ecc-8c0b-6e020557d7bd": "iCloud Keychain",
        "ea9b8d66-4d01-1d21-3ce4-b6b48cb575d4": "Google Password Manager",
        "adce0002-35bc-c60a-648b-0b25f1f05503": "Chrome on Mac",
        "08987058-cadc-4b81-b6e1-30de50dcbe96": "Windows Hello",
        "bada5566-a7aa-401f-bd96-45619a55120d": "1Password",
        "d548826e-79b4-db40-a3d8-11116f7e8349": "Bitwarden",
    ]

    /// The canonical 8-4-4-4-12 lower-case form.
    static func text(_ aaguid: [UInt8]) -> String {
        let hex = aaguid.map { byte in
            let digits = Array("0123456789abcdef")
            return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0f)]])
        }.joined()
        guard hex.count == 32 else { return hex }
        let characters = Array(hex)
        return [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(characters[$0]) }.joined(separator: "-")
    }
}

extension PasskeyPolicy {
    /// A host name as an RP ID must be: labels of letters, digits and '-', joined by dots.
    static func isValidRPID(_ id: String) -> Bool {
        guard !id.isEmpty, id.utf8.count <= 253 else { return false }
        return id.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { label in
            !label.isEmpty && label.utf8.count <= 63 && !label.hasPrefix("-") && !label.hasSuffix("-")
                && label.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-") }
        }
    }

    /// An origin a ceremony may come from: https (http only on localhost, as browsers allow),
    /// no path, its host the RP ID or under it.
    static func isOrigin(_ origin: String, within rpID: String) -> Bool {
        let rest: Substring
        if origin.hasPrefix("https://") {
            rest = origin.dropFirst(8)
        } else if origin.hasPrefix("http://"), rpID == "localhost" {
            rest = origin.dropFirst(7)
        } else {
            return false
        }
        guard !rest.contains("/") else { return false }
        let host = rest.prefix { $0 != ":" }
        let port = rest.dropFirst(host.count)
        guard port.isEmpty || (port.count > 1 && port.dropFirst().allSatisfy(\.isNumber) && port.count <= 6) else { return false }
        return host == rpID || host.hasSuffix("." + rpID)
    }
}
