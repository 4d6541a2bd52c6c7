import Secrets

/// The exact bytes a device key signs to confirm one transfer (PSD2 dynamic linking, as Twilio
/// Verify Push binds a challenge to its details): UTF-8 lines `name=value` in a fixed order,
/// no trailing newline. No value holds `=` or a newline (ids are base64url, accounts and
/// currency fixed words, the brand checked at start), so the text has exactly one
/// reading and the app can decode it and show it before asking for Face ID:
///
///     latchkey-transfer-v1
///     service=Latchkey
///     transfer_id=tr_n0os0IhYxJ1AuBVCaCxUow
///     amount=500000
///     currency=USD
///     from=checking
///     to=saving
///     challenge=<base64url of 32 random bytes>
enum TransferSigning {
    static let version = "latchkey-transfer-v1"
    static let challengeByteCount = 32

    static func bytes(_ transfer: Transfer, challenge: [UInt8], service: String) -> [UInt8] {
        let lines = [
            version, "service=\(service)", "transfer_id=\(transfer.id)", "amount=\(transfer.amountMinor)",
            "currency=\(transfer.currency)", "from=\(transfer.from)", "to=\(transfer.to)", "challenge=\(Base64URL.encode(challenge))",
        ]
        return Array(lines.joined(separator: "\n").utf8)
    }
}
