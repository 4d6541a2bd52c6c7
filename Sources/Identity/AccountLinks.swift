/// The links mailed for the account's own changes, under paths the app and the web pages
/// share: `verify-email`, `email-change/confirm` and `email-change/revert`. The app's deep link
/// (`latchkey://verify-email?token=...`) always; with the HTTP door's public origin, the universal
/// link too (`https://bank.example.com/verify-email?token=...`), which opens the app where it is
/// installed and the page elsewhere.
public struct AccountLinks: Sendable, Equatable {
    public enum Page: String, Sendable {
        case verifyEmail = "verify-email"
        case confirmEmailChange = "email-change/confirm"
        case revertEmailChange = "email-change/revert"
    }

    /// The app's URL scheme (`--app-link-scheme`).
    public var scheme = "latchkey"
    /// `--public-url`, without a trailing slash.
    public var publicOrigin: String?

    public init(scheme: String = "latchkey", publicOrigin: String? = nil) {
        self.scheme = scheme
        self.publicOrigin = publicOrigin
    }

    /// The token is base64url after its prefix: nothing in it needs escaping in a query.
    public func appLink(_ page: Page, token: String) -> String { "\(scheme)://\(page.rawValue)?token=\(token)" }

    public func webLink(_ page: Page, token: String) -> String? { publicOrigin.map { "\($0)/\(page.rawValue)?token=\(token)" } }

    /// A scheme as RFC 3986 has it: a letter, then letters, digits, '+', '-' or '.'.
    public static func isValidScheme(_ scheme: String) -> Bool {
        guard let first = scheme.unicodeScalars.first, first.isASCII, first.properties.isAlphabetic, scheme.utf8.count <= 32 else { return false }
        return scheme.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "+-.".unicodeScalars.contains($0)) }
    }
}
