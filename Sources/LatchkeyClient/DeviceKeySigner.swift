import Foundation

/// The device's P-256 key, which never leaves it: on iOS a Secure Enclave key whose access
/// control (`.biometryCurrentSet` or `.userPresence`) matches `protection` (see the README).
/// The client only asks for the public key once, at enrollment, and for signatures.
public protocol DeviceKeySigner: Sendable {
    /// How the key is protected; sent at enrollment. Only `biometry` keys count as a second factor.
    var protection: KeyProtection { get }
    /// The public key as `SecKeyCopyExternalRepresentation` gives it: the 65-byte X9.63
    /// uncompressed point `04 || X || Y`.
    func publicKeyX963() async throws -> Data
    /// A DER ECDSA P-256 signature over SHA-256 of `message`
    /// (`SecKeyCreateSignature(key, .ecdsaSignatureMessageX962SHA256, message)`). Throws when
    /// the person cancels or fails biometry.
    func signature(for message: Data) async throws -> Data
}
