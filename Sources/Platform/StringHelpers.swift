/// The few string operations the server took from Foundation's `NSString` bridge, which
/// FoundationEssentials (all the server links, so that the binary carries no ICU) lacks.
extension StringProtocol {
    /// Without leading and trailing spaces, tabs and line breaks.
    public func trimmingWhitespace() -> String {
        guard let first = firstIndex(where: { !$0.isWhitespace }) else { return "" }
        let last = lastIndex(where: { !$0.isWhitespace })!
        return String(self[first...last])
    }

    /// The first occurrence of `needle`, letters compared without regard to case.
    public func firstRange(ofIgnoringCase needle: String) -> Range<Index>? {
        let target = needle.map { $0.lowercased() }
        guard !target.isEmpty else { return nil }
        var start = startIndex
        while start < endIndex {
            var index = start
            var matched = 0
            while matched < target.count, index < endIndex, self[index].lowercased() == target[matched] {
                matched += 1
                index = self.index(after: index)
            }
            if matched == target.count { return start..<index }
            start = self.index(after: start)
        }
        return nil
    }
}

extension String {
    /// `directory/name`, with one slash between them.
    public func appendingPathComponent(_ component: String) -> String {
        if isEmpty { return component }
        return hasSuffix("/") ? self + component : self + "/" + component
    }

    /// Every byte of the UTF-8 form percent-encoded except RFC 3986's unreserved characters
    /// (ASCII letters, digits, `-._~`): safe in any part of a URL.
    public var percentEncoded: String {
        let hex = Array("0123456789ABCDEF".unicodeScalars)
        var result = String.UnicodeScalarView()
        for byte in utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                result.append(Unicode.Scalar(byte))
            default:
                result.append("%")
                result.append(hex[Int(byte >> 4)])
                result.append(hex[Int(byte & 0x0f)])
            }
        }
        return String(result)
    }

    /// What comes before the last slash: "" when there is none, "/" for a name at the root.
    public var deletingLastPathComponent: String {
        guard let slash = lastIndex(of: "/") else { return "" }
        return slash == startIndex ? "/" : String(self[..<slash])
    }
}

extension String {
    /// Every `scalar` replaced by `replacement`, scalar by scalar: a CR inside a CRLF pair too,
    /// where `replacing(_:with:)` compares whole characters and would leave the pair alone.
    public func replacingScalar(_ scalar: Unicode.Scalar, with replacement: String) -> String {
        var result = String.UnicodeScalarView()
        for each in unicodeScalars {
            if each == scalar { result.append(contentsOf: replacement.unicodeScalars) } else { result.append(each) }
        }
        return String(result)
    }
}

extension String {
    /// The text for HTML: `&`, `<`, `>`, `"` and `'` as entities, fit for element text and
    /// quoted attribute values alike.
    public func htmlEscaped() -> String {
        var out = ""
        out.reserveCapacity(utf8.count)
        for character in self {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out
    }
}
