/// The one rule for an e-mail address, wherever one arrives (registration, a reset request):
/// trimmed and lower-cased (the local part too: addresses are treated case-insensitively, as
/// mail providers do in practice); one `@`; a local part of 1-64 RFC 5322 `atext` characters
/// and single dots (no quoted forms); a domain of dot-separated labels `[a-z0-9-]` with at least
/// one dot; 254 bytes in all. A reset can then never be asked for an address registration
/// would refuse.
public enum EmailAddress {
    public static let maxBytes = 254
    public static let localPartMaxBytes = 64

    public enum Problem: Error, Sendable, Equatable {
        /// Not one address of the form name@example.com (no `@`, two, or too long).
        case shape
        case localPart
        case domain
    }

    /// The canonical form of `raw`, or what is wrong with it.
    public static func normalized(_ raw: String) -> Result<String, Problem> {
        let bytes = trimmedLowercased(Array(raw.utf8))
        let parts = bytes.split(separator: UInt8(ascii: "@"), omittingEmptySubsequences: false)
        guard bytes.count <= maxBytes, parts.count == 2 else { return .failure(.shape) }
        let local = parts[0]
        let doubleDot = zip(local, local.dropFirst()).contains { $0 == UInt8(ascii: ".") && $1 == UInt8(ascii: ".") }
        guard (1...localPartMaxBytes).contains(local.count), local.allSatisfy(atext.contains), !doubleDot,
            local.first != UInt8(ascii: "."), local.last != UInt8(ascii: ".")
        else { return .failure(.localPart) }
        let labels = parts[1].split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        let labelsValid = labels.allSatisfy { label in
            (1...63).contains(label.count) && label.allSatisfy { isLowerAlphanumeric($0) || $0 == UInt8(ascii: "-") }
                && label.first != UInt8(ascii: "-") && label.last != UInt8(ascii: "-")
        }
        guard labels.count >= 2, labelsValid else { return .failure(.domain) }
        return .success(String(decoding: bytes, as: UTF8.self))
    }

    private static let atext = Set("abcdefghijklmnopqrstuvwxyz0123456789!#$%&'*+/=?^_`{|}~-.".utf8)

    private static func isLowerAlphanumeric(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }

    /// ASCII white space off both ends, ASCII letters lower-cased (anything else is refused later).
    private static func trimmedLowercased(_ bytes: [UInt8]) -> [UInt8] {
        let isSpace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 || $0 == 0x0a || $0 == 0x0d }
        guard let first = bytes.firstIndex(where: { !isSpace($0) }), let last = bytes.lastIndex(where: { !isSpace($0) }) else { return [] }
        return bytes[first...last].map { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) ? $0 + 32 : $0 }
    }
}
