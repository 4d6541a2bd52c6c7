import FoundationEssentials

/// Password rules in the spirit of NIST SP 800-63B: length, no composition rules, and refusal of
/// passwords that are easy to guess for this user (contain the username or e-mail), trivial
/// (repeats, sequences), common, or known breached. Lengths count Unicode characters.
public struct PasswordPolicy: Sendable {
    public var minimumLength: Int
    public var maximumLength: Int
    /// Lower-cased passwords from the operator's breached list (`--breached-passwords FILE`).
    public var breached: Set<String>

    public static let defaultMinimumLength = 8
    public static let defaultMaximumLength = 128
    /// Refuse list files beyond this many lines (a limit on everything).
    public static let breachedListMaxEntries = 5_000_000

    /// A few passwords every guessing list starts with: refused even without an operator list.
    static let common: Set<String> = [
        "password", "password1", "password123", "passw0rd", "12345678", "123456789", "1234567890",
        "qwertyuiop", "qwerty123", "iloveyou", "letmein1", "welcome1", "admin123", "football",
        "baseball", "sunshine", "princess", "trustno1", "11111111", "abc12345", "monkey123",
    ]

    public init(minimumLength: Int = defaultMinimumLength, maximumLength: Int = defaultMaximumLength, breached: Set<String> = []) {
        precondition(minimumLength >= 1 && maximumLength >= minimumLength)
        self.minimumLength = minimumLength
        self.maximumLength = maximumLength
        self.breached = breached
    }

    /// Reads one password a line (blank lines and `#` comments skipped), lower-cased.
    public static func loadBreachedList(path: String) throws -> Set<String> {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        var entries = Set<String>()
        for line in text.split(whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
            let entry = String(line).trimmingASCIIWhitespace()
            if entry.isEmpty || entry.hasPrefix("#") { continue }
            guard entries.count < breachedListMaxEntries else { break }
            entries.insert(entry.lowercased())
        }
        return entries
    }

    /// Passwords are compared and hashed in Unicode NFKC (SP 800-63B 5.1.1.2), so the same
    /// password typed on keyboards that compose characters differently is the same password.
    public static func normalize(_ password: String) -> String {
        NFKC.normalize(password)
    }

    /// Throws `weakPassword` naming the first rule that fails (on the NFKC form). `username` and `email` are the
    /// normalised ones of the user, when known.
    public func check(_ raw: String, username: String?, email: String?) throws(IdentityError) {
        let password = Self.normalize(raw)
        let length = password.count
        guard length >= minimumLength else {
            throw .weakPassword(rule: "too_short", "password must have at least \(minimumLength) characters")
        }
        guard length <= maximumLength else {
            throw .weakPassword(rule: "too_long", "password must have at most \(maximumLength) characters")
        }
        let lowered = password.lowercased()
        if let username, username.count >= 3, lowered.contains(username) {
            throw .weakPassword(rule: "contains_username", "password must not contain the username")
        }
        if let email {
            let local = String(email.split(separator: "@").first ?? "")
            if lowered.contains(email) || (local.count >= 3 && lowered.contains(local)) {
                throw .weakPassword(rule: "contains_email", "password must not contain the e-mail address")
            }
        }
        if Self.isRepetitive(Array(lowered.unicodeScalars)) {
            throw .weakPassword(rule: "repetitive", "password must not be one short pattern repeated")
        }
        if Self.isSequence(Array(lowered.unicodeScalars)) {
            throw .weakPassword(rule: "sequence", "password must not be a sequence (abcd..., 1234..., qwerty...)")
        }
        if Self.common.contains(lowered) {
            throw .weakPassword(rule: "common", "password is one of the most common passwords")
        }
        if breached.contains(lowered) {
            throw .weakPassword(rule: "breached", "password appears in a list of breached passwords")
        }
    }

    /// One pattern of up to 4 characters, repeated ("aaaaaaaa", "abababab", "abcabcabc").
    static func isRepetitive(_ scalars: [Unicode.Scalar]) -> Bool {
        for period in 1...4 where scalars.count >= period * 2 {
            if scalars.indices.allSatisfy({ scalars[$0] == scalars[$0 % period] }) { return true }
        }
        return false
    }

    /// Each character one step after (or before) the previous one ("abcdefgh", "87654321"), or a
    /// run along a keyboard row ("qwertyui", "asdfghjk").
    static func isSequence(_ scalars: [Unicode.Scalar]) -> Bool {
        guard scalars.count >= 2 else { return false }
        let steps = zip(scalars, scalars.dropFirst()).map { Int($1.value) - Int($0.value) }
        if steps.allSatisfy({ $0 == 1 }) || steps.allSatisfy({ $0 == -1 }) { return true }
        let text = String(String.UnicodeScalarView(scalars))
        for row in ["qwertyuiop", "asdfghjkl", "zxcvbnm", "1234567890", "qwertzuiop", "azertyuiop"] {
            if row.contains(text) || String(row.reversed()).contains(text) { return true }
        }
        return false
    }
}
