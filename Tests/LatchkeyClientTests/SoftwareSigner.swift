import Foundation
import LatchkeyClient
import Secrets

/// Stands in for the Secure Enclave: an OpenSSL P-256 key in memory (Secrets' `P256PrivateKey`),
/// with the same outputs (X9.63 public point, DER ECDSA over SHA-256).
struct SoftwareSigner: DeviceKeySigner {
    let key = P256PrivateKey()
    let protection: KeyProtection

    func publicKeyX963() -> Data { Data(key.publicKey.x963) }

    func signature(for message: Data) -> Data { Data(key.signature(for: Array(message))) }
}
