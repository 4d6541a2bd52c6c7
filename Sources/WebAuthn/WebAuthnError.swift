/// Why a registration or an assertion was refused. `reason` is stable (its raw value is what
/// logs and the wire may carry); `message` says which check failed and may name a field, but
/// never holds input: no challenge, key, signature or client data.
public struct WebAuthnError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Reason: String, Sendable {
        case malformed
        case wrongType = "wrong_type"
        case originNotAllowed = "origin_not_allowed"
        case crossOrigin = "cross_origin"
        case rpIDMismatch = "rp_id_mismatch"
        case userNotPresent = "user_not_present"
        case userNotVerified = "user_not_verified"
        case unsupportedAlgorithm = "unsupported_algorithm"
        case unsupportedFormat = "unsupported_format"
        case formatNotAllowed = "format_not_allowed"
        case badAttestation = "bad_attestation"
        case badSignature = "bad_signature"
        case counterRegressed = "counter_regressed"
    }

    public let reason: Reason
    public let message: String

    public init(_ reason: Reason, _ message: String) {
        self.reason = reason
        self.message = message
    }

    public var description: String { "\(reason.rawValue): \(message)" }
}
