import LineProtocol
import Secrets

/// The members of clientDataJSON (WebAuthn L3 §5.8.1) a relying party checks. Others are ignored.
public struct ClientData: Sendable, Equatable {
    /// "webauthn.create" or "webauthn.get".
    public let type: String
    /// The challenge the relying party issued, decoded from base64url.
    public let challenge: [UInt8]
    public let origin: String
    /// Nil when the member is absent.
    public let crossOrigin: Bool?
    public let topOrigin: String?

    /// A browser's clientDataJSON is 150 to 400 bytes: the type, a challenge of a few dozen
    /// characters, the origin, crossOrigin, at times topOrigin and a member Chrome adds to
    /// discourage exact-match parsers. 4 KiB leaves room for long origins and other clients,
    /// and keeps what an unauthenticated caller makes the parser read small.
    public static let maxBytes = 4096
    static let jsonLimits = JSONLimits(maxDepth: 4, maxBytes: maxBytes, maxStringBytes: maxBytes)
}

/// clientDataJSON, parsed: public so a caller can read the challenge, look it up in its store,
/// and only then verify the registration or assertion.
public func parseClientData(_ bytes: [UInt8]) throws(WebAuthnError) -> ClientData {
    let json: JSON
    do {
        json = try JSONParser.parse(bytes, limits: ClientData.jsonLimits)
    } catch {
        throw WebAuthnError(.malformed, "client data: \(error.message)")
    }
    guard json.objectValue != nil else { throw malformedClientData("not a JSON object") }
    guard let type = json["type"]?.stringValue else { throw malformedClientData("type missing or not a string") }
    guard let origin = json["origin"]?.stringValue else { throw malformedClientData("origin missing or not a string") }
    // base64url without padding (§5.8.1), so one challenge has one spelling.
    guard let encoded = json["challenge"]?.stringValue, !encoded.utf8.contains(where: { "+/=".utf8.contains($0) }),
        let challenge = Base64URL.decode(encoded), !challenge.isEmpty
    else { throw malformedClientData("challenge missing or not base64url") }
    let crossOrigin = json["crossOrigin"]
    guard crossOrigin == nil || crossOrigin?.boolValue != nil else { throw malformedClientData("crossOrigin is not a boolean") }
    let topOrigin = json["topOrigin"]
    guard topOrigin == nil || topOrigin?.stringValue != nil else { throw malformedClientData("topOrigin is not a string") }
    return ClientData(type: type, challenge: challenge, origin: origin, crossOrigin: crossOrigin?.boolValue, topOrigin: topOrigin?.stringValue)
}

private func malformedClientData(_ what: String) -> WebAuthnError {
    WebAuthnError(.malformed, "client data: \(what)")
}
