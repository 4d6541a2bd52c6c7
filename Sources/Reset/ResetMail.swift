import Delivery

/// A link template with one `{token}` placeholder: `latchkey://reset-password?token={token}`
/// (custom scheme deep link) or `https://example.com/reset?token={token}` (universal link).
public struct LinkTemplate: Sendable, Equatable {
    public static let placeholder = "{token}"
    public static let defaultTemplate = "latchkey://reset-password?token={token}"
    public let template: String

    public init(_ template: String) throws(ResetConfigurationError) {
        let parts = template.components(separatedBy: Self.placeholder)
        guard parts.count == 2 else {
            throw ResetConfigurationError("--reset-link-template must contain {token} exactly once")
        }
        guard let colon = template.firstIndex(of: ":"), colon > template.startIndex,
            template[..<colon].allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }),
            template[..<colon].first?.isLetter == true
        else {
            throw ResetConfigurationError("--reset-link-template must be an absolute URL (scheme://...)")
        }
        guard !template.contains(where: { $0 == " " || $0 == "\"" || $0 == "<" || $0 == ">" || $0.isNewline }) else {
            throw ResetConfigurationError("--reset-link-template must not contain spaces, quotes or angle brackets")
        }
        self.template = template
    }

    /// The link for one token. The token is percent-encoded for a URL query or path (base64url
    /// tokens are unreserved characters already, so this changes nothing for ours, but the
    /// template never receives raw reserved characters).
    public func link(token: String) -> String {
        template.replacing(Self.placeholder, with: token.percentEncoded)
    }
}

/// The three mails of the reset flow, as plain text and HTML alternatives.
public struct ResetMailComposer: Sendable {
    public let productName: String
    public let linkTemplate: LinkTemplate

    public init(productName: String = "Latchkey", linkTemplate: LinkTemplate) {
        self.productName = productName
        self.linkTemplate = linkTemplate
    }

    /// The reset link mail, in the account's language. It holds the token: never log its text.
    public func resetLink(to address: String, locale: MailLocale = .english, token: String, validForSeconds: Int64) -> OutgoingMessage {
        let link = linkTemplate.link(token: token)
        // A custom-scheme link (the default, `latchkey://`) opens only where the app is installed.
        let words = ResetMailWords(locale: locale, product: productName)
            .linkMail(validFor: validForSeconds, opensInABrowser: link.hasPrefix("https://") || link.hasPrefix("http://"))
        let text = [words.hello, words.request, link, words.expiry, words.ignore, words.closing].joined(separator: "\n\n")
        let html = """
            <!DOCTYPE html>
            <html lang="\(locale.rawValue)"><head><meta charset="utf-8"><meta name="referrer" content="no-referrer"><title>\(MailHTML.escape(words.subject))</title></head>
            <body style="font-family: -apple-system, Helvetica, Arial, sans-serif; line-height: 1.5">
            <p>\(MailHTML.escape(words.hello))</p>
            <p>\(MailHTML.escape(words.request))</p>
            <p><a href="\(MailHTML.escape(link))" rel="noreferrer">\(MailHTML.escape(words.button))</a></p>
            <p>\(MailHTML.escape(words.expiry).replacing(MailHTML.escape(words.validFor), with: "<strong>\(MailHTML.escape(words.validFor))</strong>"))</p>
            <p>\(MailHTML.escape(words.ignore))</p>
            <p style="color: #666; font-size: 90%">\(MailHTML.escape(words.fallback))<br>\(MailHTML.escape(link))</p>
            </body></html>
            """
        return OutgoingMessage(channel: .email, to: address, subject: words.subject, text: text, html: html)
    }

    /// Sent to an address with no account, when the operator turned it on.
    public func unknownAddress(to address: String) -> OutgoingMessage {
        let text = """
            Hello,

            Someone asked to reset the password of a \(productName) account for this e-mail \
            address, but no account uses it. If it was you, you may have signed up with another \
            address. If it was not you, ignore this e-mail; nothing has changed.

            \(productName)
            """
        let html = MailHTML.paragraphs(text, language: "en")
        return OutgoingMessage(channel: .email, to: address, subject: "Password reset request for \(productName)", text: text, html: html)
    }

    /// Sent after a completed reset, in the account's language; names the second factors the
    /// reset removed because they were set up just before it (`totp`, `recovery_codes`).
    public func passwordChanged(to address: String, locale: MailLocale = .english, removedFactors: [String] = []) -> OutgoingMessage {
        let (subject, text) = ResetMailWords(locale: locale, product: productName).passwordChanged(removedFactors: removedFactors)
        return OutgoingMessage(channel: .email, to: address, subject: subject, text: text, html: MailHTML.paragraphs(text, language: locale.rawValue))
    }
}
