/// Unicode NFKC without ICU: each scalar's full compatibility decomposition (from the table in
/// `CompatibilityDecompositions.swift`), then the standard library's canonical composition (NFC),
/// which decomposes, reorders and composes the rest. NFKC(s) = NFC(NFKD(s)), and NFC of a string
/// canonically equivalent to NFKD(s) is the same string, so mapping scalar by scalar suffices.
enum NFKC {
    static func normalize(_ text: String) -> String {
        // ASCII is its own NFKC: the common password skips the table.
        if text.utf8.allSatisfy({ $0 < 0x80 }) { return text }
        var decomposed = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if let mapping = table[scalar.value] {
                decomposed.append(contentsOf: mapping)
            } else {
                decomposed.append(scalar)
            }
        }
        return String(decoding: String(decomposed)._nfcCodeUnits, as: UTF8.self)
    }

    /// Parsed once, on the first non-ASCII text: "hex hex hex..." per line, the scalar first.
    private static let table: [UInt32: [Unicode.Scalar]] = {
        var table: [UInt32: [Unicode.Scalar]] = [:]
        for line in compatibilityDecompositions.split(separator: "\n") {
            let values = line.split(separator: " ").map { UInt32($0, radix: 16)! }
            table[values[0]] = values.dropFirst().map { Unicode.Scalar($0)! }
        }
        return table
    }()
}
