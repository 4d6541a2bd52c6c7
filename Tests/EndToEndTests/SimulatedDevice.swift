import Foundation
import LineProtocol
import Secrets

/// Plays the iPhone's Secure Enclave key: a software P-256 key exported as
/// `SecKeyCopyExternalRepresentation` does (X9.63 uncompressed, standard base64), and DER
/// ECDSA-SHA256 signatures of a challenge given in base64url.
struct SimulatedDevice {
    let id: String
    let key = P256PrivateKey()

    var publicKey: JSON { .string(Data(key.publicKey.x963).base64EncodedString()) }

    func sign(_ challenge: JSON) -> JSON {
        .string(Data(key.signature(for: Base64URL.decode(challenge.stringValue ?? "") ?? [])).base64EncodedString())
    }
}
