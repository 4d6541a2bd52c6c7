import Contract

/// Canonical forms of what users type: usernames, e-mail addresses, phone numbers.
/// Pure functions; each failure names the field and the rule, never echoes the value.
public enum Normalization {
    public static let usernameLengthRange = 3...32

    /// Lower-cased ASCII: 3-32 of `a-z 0-9 . _ -`, starting with a letter or digit.
    /// Case-insensitive ("Alice" and "alice" are one user); non-ASCII is refused, so look-alike
    /// letters from other scripts cannot make a second "alice".
    public static func username(_ raw: String) throws(IdentityError) -> String {
        let lowered = raw.lowercasedASCII()
        let bytes = Array(lowered.utf8)
        guard usernameLengthRange.contains(bytes.count) else {
            throw .invalidField("username", "username must be 3 to 32 characters")
        }
        guard bytes.allSatisfy({ isLowerAlphanumeric($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") }),
            isLowerAlphanumeric(bytes[0])
        else {
            throw .invalidField("username", "username may hold only a-z, 0-9, '.', '_' and '-', and must start with a letter or digit")
        }
        return lowered
    }

    /// `EmailAddress`'s rule, as identity's error.
    public static func email(_ raw: String) throws(IdentityError) -> String {
        switch EmailAddress.normalized(raw) {
        case .success(let address): return address
        case .failure(.shape): throw .invalidField("email", "email must be one address of the form name@example.com")
        case .failure(.localPart): throw .invalidField("email", "email has an invalid part before the @")
        case .failure(.domain): throw .invalidField("email", "email has an invalid domain")
        }
    }

    /// E.164 (`+` and 8-15 digits). Spaces, dots, dashes and parentheses are ignored. A number
    /// without `+` (or `00`) is national: it gets the default country's calling code, after
    /// dropping a trunk `0` (or a leading `1` for +1 countries when 11 digits are given).
    /// For +1 (US, CA...) the national number must be 10 digits with area code and exchange not
    /// starting with 0 or 1: "5555550100" and "(555) 555-0100" become "+15555550100".
    public static func phone(_ raw: String, defaultCountry: PhoneCountry) throws(IdentityError) -> String {
        var digits: [UInt8] = []
        var international = false
        for (index, byte) in raw.trimmingASCIIWhitespace().utf8.enumerated() {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digits.append(byte)
            case UInt8(ascii: "+") where index == 0: international = true
            case UInt8(ascii: " "), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "("), UInt8(ascii: ")"): continue
            default: throw .invalidField("phone", "phone may hold only digits, spaces, '-', '.', '(', ')' and a leading '+'")
            }
            guard digits.count <= 20 else { throw .invalidField("phone", "phone has too many digits") }
        }
        if !international, digits.starts(with: Array("00".utf8)) {
            international = true
            digits.removeFirst(2)
        }
        var full: [UInt8]
        if international {
            full = digits
        } else if defaultCountry.callingCode == "1" {
            if digits.count == 11, digits[0] == UInt8(ascii: "1") { digits.removeFirst() }
            guard digits.count == 10 else {
                throw .invalidField("phone", "phone must be 10 digits for +1 numbers, or start with + and the country code")
            }
            full = Array("1".utf8) + digits
        } else {
            if digits.first == UInt8(ascii: "0") { digits.removeFirst() }
            full = Array(defaultCountry.callingCode.utf8) + digits
        }
        guard (8...15).contains(full.count), full.first != UInt8(ascii: "0") else {
            throw .invalidField("phone", "phone must have 8 to 15 digits including the country code")
        }
        if full.first == UInt8(ascii: "1") {
            guard full.count == 11, full[1] >= UInt8(ascii: "2"), full[4] >= UInt8(ascii: "2") else {
                throw .invalidField("phone", "phone is not a valid +1 (North American) number")
            }
        }
        return "+" + String(decoding: full, as: UTF8.self)
    }

    /// What the app sends as its device id (identifierForVendor, a UUID, or the like): 1-128 of
    /// `A-Z a-z 0-9 . _ : -`, kept as given (case-sensitive).
    public static func deviceID(_ raw: String) throws(IdentityError) -> String {
        let bytes = Array(raw.utf8)
        let allowed = bytes.allSatisfy { byte in
            isLowerAlphanumeric(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ":") || byte == UInt8(ascii: "-")
        }
        guard (1...128).contains(bytes.count), allowed else {
            throw .invalidField("device_id", "device_id must be 1-128 of A-Z, a-z, 0-9, '.', '_', ':' and '-'")
        }
        return raw
    }

    private static func isLowerAlphanumeric(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }
}

/// A country for national phone numbers: its ISO 3166 code and calling code.
public struct PhoneCountry: Sendable, Equatable {
    public let isoCode: String
    public let callingCode: String

    /// A small table of countries the operator may pick as the default (`--default-country`).
    static let table: [String: String] = [
        "US": "1", "CA": "1", "GB": "44", "IE": "353", "FR": "33", "DE": "49", "ES": "34", "IT": "39",
        "NL": "31", "BE": "32", "CH": "41", "AT": "43", "SE": "46", "NO": "47", "DK": "45", "FI": "358",
        "PL": "48", "PT": "351", "RU": "7", "UA": "380", "AU": "61", "NZ": "64", "JP": "81", "IN": "91",
        "BR": "55", "MX": "52",
    ]

    public init?(_ isoCode: String) {
        let upper = isoCode.uppercased()
        guard let callingCode = Self.table[upper] else { return nil }
        self.isoCode = upper
        self.callingCode = callingCode
    }

    public static let unitedStates = PhoneCountry("US")!
}

extension String {
    func trimmingASCIIWhitespace() -> String {
        let bytes = Array(utf8)
        let isSpace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 || $0 == 0x0a || $0 == 0x0d }
        guard let first = bytes.firstIndex(where: { !isSpace($0) }), let last = bytes.lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return String(decoding: bytes[first...last], as: UTF8.self)
    }

    func lowercasedASCII() -> String {
        String(decoding: utf8.map { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) ? $0 + 32 : $0 }, as: UTF8.self)
    }
}
