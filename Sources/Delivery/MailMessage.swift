import FoundationEssentials
import Platform
import Secrets

/// A mailbox: `Display Name <local@domain>`.
public struct MailAddress: Sendable, Equatable {
    public var displayName: String?
    public var address: String

    public init(displayName: String? = nil, address: String) {
        self.displayName = displayName
        self.address = address
    }

    /// Reads `Name <a@b>` or a bare `a@b`; nil when the address part is missing or unsafe.
    public init?(parsing text: String) {
        let trimmed = text.trimming(" \t")
        if let open = trimmed.lastIndex(of: "<"), trimmed.hasSuffix(">") {
            let name = trimmed[..<open].trimming(" \t\"")
            displayName = name.isEmpty ? nil : name
            address = String(trimmed[trimmed.index(after: open)..<trimmed.index(before: trimmed.endIndex)])
        } else {
            displayName = nil
            address = trimmed
        }
        guard Self.isSafeAddress(address) else { return nil }
    }

    /// One `@`, no spaces, controls, angle brackets or CR/LF (which could inject SMTP commands or headers).
    public static func isSafeAddress(_ address: String) -> Bool {
        let parts = address.split(separator: "@", omittingEmptySubsequences: false)
        return parts.count == 2 && !parts[0].isEmpty && !parts[1].isEmpty && address.utf8.count <= 254
            && !address.unicodeScalars.contains { $0.value <= 0x20 || $0.value == 0x7f || "<>()[]\\,;:\"".unicodeScalars.contains($0) }
    }

    public var domain: String { String(address.split(separator: "@").last ?? "localhost") }

    /// The header form: encoded-word or quoted display name, then `<address>`.
    var headerValue: String {
        guard let displayName, !displayName.isEmpty else { return "<\(address)>" }
        return "\(MailMessage.phrase(displayName)) <\(address)>"
    }
}

/// An RFC 5322 message with a MIME multipart/alternative body (text/plain + text/html), both
/// quoted-printable UTF-8, CRLF line endings, every line under 78 characters.
public struct MailMessage: Sendable {
    public var from: MailAddress
    public var to: [MailAddress]
    public var subject: String
    public var text: String
    public var html: String?
    /// Seconds since 1970; `Date:` header.
    public var dateSeconds: Int64
    public var messageID: String
    /// Extra headers (name, value): ASCII only, no CR/LF.
    public var extraHeaders: [(String, String)] = []

    public init(from: MailAddress, to: [MailAddress], subject: String, text: String, html: String? = nil, dateSeconds: Int64 = Int64(time(nil)), messageID: String? = nil) {
        precondition(!to.isEmpty, "a message needs a recipient")
        self.from = from
        self.to = to
        self.subject = subject
        self.text = text
        self.html = html
        self.dateSeconds = dateSeconds
        self.messageID = messageID ?? Self.makeMessageID(domain: from.domain)
    }

    /// `<random.time@domain>`: unique without revealing anything.
    public static func makeMessageID(domain: String) -> String {
        "<\(Hex.encode(SecureRandom.bytes(16))).\(time(nil))@\(domain)>"
    }

    /// The whole message as bytes, ready for DATA (before dot-stuffing, which the SMTP client does).
    public func rendered() -> [UInt8] {
        var lines: [String] = []
        lines.append("Date: \(Self.rfc5322Date(dateSeconds))")
        lines.append(Self.folded("From: \(from.headerValue)"))
        lines.append(Self.folded("To: \(to.map(\.headerValue).joined(separator: ", "))"))
        lines.append("Message-ID: \(messageID)")
        lines.append(Self.folded("Subject: \(Self.unstructured(subject))"))
        lines.append("MIME-Version: 1.0")
        for (name, value) in extraHeaders {
            precondition(!name.contains(":") && !(name + value).contains(where: { $0 == "\r" || $0 == "\n" }), "header injection")
            lines.append(Self.folded("\(name): \(value)"))
        }
        if let html {
            let boundary = "=_lk_" + Hex.encode(SecureRandom.bytes(12))
            lines.append("Content-Type: multipart/alternative; boundary=\"\(boundary)\"")
            lines.append("")
            lines.append("This is a MIME message with text and HTML versions.")
            lines.append("--\(boundary)")
            lines += Self.part(contentType: "text/plain; charset=utf-8", body: text)
            lines.append("--\(boundary)")
            lines += Self.part(contentType: "text/html; charset=utf-8", body: html)
            lines.append("--\(boundary)--")
        } else {
            lines.append("Content-Type: text/plain; charset=utf-8")
            lines.append("Content-Transfer-Encoding: quoted-printable")
            lines.append("")
            lines += Self.quotedPrintable(text)
        }
        return Array((lines.joined(separator: "\r\n") + "\r\n").utf8)
    }

    private static func part(contentType: String, body: String) -> [String] {
        ["Content-Type: \(contentType)", "Content-Transfer-Encoding: quoted-printable", ""] + quotedPrintable(body)
    }

    // MARK: Encodings

    /// Quoted-printable (RFC 2045 §6.7) of UTF-8 text: line breaks become CRLF, `=`, controls,
    /// non-ASCII and trailing blanks are escaped, lines soft-broken to at most 76 characters.
    public static func quotedPrintable(_ text: String) -> [String] {
        let normalized = text.replacing("\r\n", with: "\n").replacingScalar("\r", with: "\n")
        var out: [String] = []
        for line in normalized.split(separator: "\n", omittingEmptySubsequences: false) {
            let bytes = Array(line.utf8)
            var current = ""
            for (index, byte) in bytes.enumerated() {
                let isLast = index == bytes.count - 1
                let token: String
                if (byte == 0x20 || byte == 0x09) && !isLast {
                    token = String(UnicodeScalar(byte))
                } else if byte >= 33 && byte <= 126 && byte != UInt8(ascii: "=") {
                    token = String(UnicodeScalar(byte))
                } else {
                    token = "=" + hexByte(byte)
                }
                // Room for the soft break `=`: a line holds at most 75 characters plus `=`.
                let limit = isLast ? 76 : 75
                if current.utf8.count + token.utf8.count > limit {
                    out.append(current + "=")
                    current = ""
                }
                current += token
            }
            out.append(current)
        }
        return out
    }

    private static func hexByte(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0f)]])
    }

    /// An unstructured header value: as is when plain ASCII, else RFC 2047 encoded-words
    /// (`=?UTF-8?B?...?=`, each at most 75 characters, split on character boundaries).
    static func unstructured(_ value: String) -> String {
        let clean = value.replacingScalar("\r", with: " ").replacingScalar("\n", with: " ")
        if clean.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value < 0x7f }) && !clean.contains("=?") { return clean }
        return encodedWords(clean).joined(separator: " ")
    }

    /// A display name: a quoted string when ASCII, encoded-words otherwise.
    static func phrase(_ value: String) -> String {
        let clean = value.replacingScalar("\r", with: " ").replacingScalar("\n", with: " ")
        if clean.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value < 0x7f }) {
            let atext = clean.unicodeScalars.allSatisfy { $0.properties.isAlphabetic || ("0"..."9").contains(Character($0)) || " !#$%&'*+-/=?^_`{|}~".unicodeScalars.contains($0) }
            if atext && !clean.contains("=?") { return clean }
            return "\"" + clean.replacingScalar("\\", with: "\\\\").replacingScalar("\"", with: "\\\"") + "\""
        }
        return encodedWords(clean).joined(separator: " ")
    }

    static func encodedWords(_ value: String) -> [String] {
        // At most 39 bytes (52 base64 characters) per word: a 64-character word, so even the
        // first one fits on the `Subject: ` line under 78 characters (RFC 2047 allows 75).
        var words: [String] = []
        var chunk: [UInt8] = []
        for character in value {
            let bytes = Array(String(character).utf8)
            if chunk.count + bytes.count > 39 {
                words.append("=?UTF-8?B?\(Base64.encode(chunk))?=")
                chunk = []
            }
            chunk += bytes
        }
        if !chunk.isEmpty || words.isEmpty { words.append("=?UTF-8?B?\(Base64.encode(chunk))?=") }
        return words
    }

    /// Folds a header line at spaces so no line passes 78 characters where that is possible.
    static func folded(_ line: String) -> String {
        guard line.utf8.count > 78 else { return line }
        var out: [String] = []
        var current = ""
        for (index, word) in line.split(separator: " ", omittingEmptySubsequences: false).enumerated() {
            // Never break right after `Name:`: the value starts on the header's own line.
            if index > 1 && current.utf8.count + 1 + word.utf8.count > 78 {
                out.append(current)
                current = " " + word
            } else {
                current += (current.isEmpty ? "" : " ") + word
            }
        }
        out.append(current)
        return out.joined(separator: "\r\n")
    }

    /// `Sun, 29 Nov 2026 16:19:20 +0000`.
    static func rfc5322Date(_ seconds: Int64) -> String {
        var value = time_t(seconds)
        var parts = tm()
        gmtime_r(&value, &parts)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(days[Int(parts.tm_wday)]), \(parts.tm_mday) \(months[Int(parts.tm_mon)]) \(Int(parts.tm_year) + 1900) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) +0000"
    }
}

extension StringProtocol {
    fileprivate func trimming(_ set: String) -> String {
        var scalars = Substring(self).unicodeScalars
        let members = Set(set.unicodeScalars)
        while let first = scalars.first, members.contains(first) { scalars.removeFirst() }
        while let last = scalars.last, members.contains(last) { scalars.removeLast() }
        return String(scalars)
    }
}
