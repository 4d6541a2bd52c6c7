import Platform

/// RFC 7468 text encoding: one `-----BEGIN label-----` block of standard base64, broken into lines.
enum PEM {
    /// The DER inside the one block labelled `label`. Nil for anything else: another label,
    /// text before or after the block, a second block, characters outside base64.
    static func decode(_ text: String, label: String) -> [UInt8]? {
        let lines = text.split(whereSeparator: \.isNewline).map { $0.trimmingWhitespace() }.filter { !$0.isEmpty }
        guard lines.count >= 3, lines.first == "-----BEGIN \(label)-----", lines.last == "-----END \(label)-----" else {
            return nil
        }
        return Base64Codec.decode(lines.dropFirst().dropLast().joined().utf8, alphabet: .standard, allowPadding: true)
    }
}
