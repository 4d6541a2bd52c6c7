import Foundation

/// The token in a password-reset link the app was opened with: the deep link
/// `latchkey://reset-password?token=lkr_...` (any custom scheme, host `reset-password`) or a
/// universal link `https://<domain>/reset?token=...`, `/reset/<token>` or `/reset#token=...`
/// (the forms of the reset service's `--reset-link-template`). Anything else is not a reset link.
public struct ResetLink: Sendable, Equatable {
    public let token: String

    /// `universalLinkPaths`: the paths the app's associated domain serves (the gateway's `--aasa-paths`, without `*`).
    public init?(url: URL, universalLinkPaths: [String] = ["/reset"]) {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false), let scheme = components.scheme?.lowercased() else {
            return nil
        }
        let candidate: String?
        if scheme == "https" {
            candidate = Self.universalLinkToken(components, paths: universalLinkPaths)
        } else if scheme != "http", components.host?.lowercased() == "reset-password" {
            candidate = components.queryItems?.first { $0.name == "token" }?.value
        } else {
            candidate = nil
        }
        guard let token = candidate, Self.looksLikeToken(token) else { return nil }
        self.token = token
    }

    private static func universalLinkToken(_ components: URLComponents, paths: [String]) -> String? {
        let path = components.path
        for base in paths {
            if path == base || path == base + "/" {
                if let query = components.queryItems?.first(where: { $0.name == "token" })?.value { return query }
                if let fragment = components.fragment, fragment.hasPrefix("token=") { return String(fragment.dropFirst("token=".count)) }
            } else if path.hasPrefix(base + "/") {
                let rest = path.dropFirst(base.count + 1)
                if !rest.isEmpty, !rest.contains("/") { return String(rest) }
            }
        }
        return nil
    }

    /// `lkr_` and base64url: refuses anything that could not be a token before it is sent anywhere.
    private static func looksLikeToken(_ token: String) -> Bool {
        guard token.hasPrefix("lkr_"), token.count > 4, token.count <= 128 else { return false }
        return token.dropFirst(4).unicodeScalars.allSatisfy { scalar in
            CharacterSet.alphanumerics.contains(scalar) && scalar.isASCII || scalar == "-" || scalar == "_"
        }
    }
}
