/// An E.164 number (`+` and 8-15 digits, no leading zero) and the country it belongs to,
/// from its calling code (longest prefix wins). Spaces, dots, dashes and parentheses are dropped.
public struct PhoneNumber: Sendable, Equatable {
    public let e164: String
    /// ISO 3166 alpha-2, or nil when the calling code is not in the table.
    public let country: String?

    public init?(_ text: String) {
        var digits = ""
        var sawPlus = false
        for character in text {
            if character == "+" && digits.isEmpty && !sawPlus {
                sawPlus = true
            } else if character.isASCII && character.isNumber {
                digits.append(character)
            } else if !" .-()".contains(character) {
                return nil
            }
        }
        guard sawPlus, (8...15).contains(digits.count), digits.first != "0" else { return nil }
        e164 = "+" + digits
        country = Self.country(ofDigits: digits)
    }

    /// The digits without the `+` (Vonage's format).
    public var digits: String { String(e164.dropFirst()) }

    static func country(ofDigits digits: String) -> String? {
        for length in stride(from: 4, through: 1, by: -1) where digits.count > length {
            if let country = callingCodes[String(digits.prefix(length))] { return country }
        }
        return nil
    }

    /// Calling codes to countries. NANP (+1) counts as US (its Caribbean members, a classic
    /// toll-fraud target, are listed by area code so an allow list of US alone excludes them).
    static let callingCodes: [String: String] = [
        "1": "US", "1242": "BS", "1246": "BB", "1264": "AI", "1268": "AG", "1284": "VG", "1340": "VI",
        "1345": "KY", "1441": "BM", "1473": "GD", "1649": "TC", "1664": "MS", "1721": "SX", "1758": "LC",
        "1767": "DM", "1784": "VC", "1809": "DO", "1829": "DO", "1849": "DO", "1868": "TT", "1869": "KN",
        "1876": "JM",
        "7": "RU", "20": "EG", "27": "ZA", "30": "GR", "31": "NL", "32": "BE", "33": "FR", "34": "ES",
        "36": "HU", "39": "IT", "40": "RO", "41": "CH", "43": "AT", "44": "GB", "45": "DK", "46": "SE",
        "47": "NO", "48": "PL", "49": "DE", "51": "PE", "52": "MX", "54": "AR", "55": "BR", "56": "CL",
        "57": "CO", "60": "MY", "61": "AU", "62": "ID", "63": "PH", "64": "NZ", "65": "SG", "66": "TH",
        "81": "JP", "82": "KR", "84": "VN", "86": "CN", "90": "TR", "91": "IN", "92": "PK", "212": "MA",
        "213": "DZ", "216": "TN", "221": "SN", "225": "CI", "234": "NG", "254": "KE", "351": "PT",
        "352": "LU", "353": "IE", "354": "IS", "358": "FI", "370": "LT", "371": "LV", "372": "EE",
        "373": "MD", "374": "AM", "375": "BY", "380": "UA", "381": "RS", "385": "HR", "386": "SI",
        "420": "CZ", "421": "SK", "852": "HK", "886": "TW", "971": "AE", "972": "IL", "966": "SA",
        "995": "GE", "998": "UZ",
    ]
}
