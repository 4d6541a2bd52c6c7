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

    /// The reset link mail. It holds the token: never log its text.
    public func resetLink(to address: String, token: String, validForSeconds: Int64) -> OutgoingMessage {
        let link = linkTemplate.link(token: token)
        let expiry = durationInWords(seconds: validForSeconds)
        // A custom-scheme link (the default, `latchkey://`) opens only where the app is installed.
        let opensInABrowser = link.hasPrefix("https://") || link.hasPrefix("http://")
        let fallback = opensInABrowser
            ? "If the button does not work, copy this address into your browser:"
            : "If the button does not work, open this e-mail on the phone where the \(productName) app is installed, or copy this address there:"
        let text = """
            Hello,

            We received a request to reset the password of your \(productName) account.
            Open this link on your phone to choose a new password:

            \(link)

            The link works once and expires in \(expiry).

            If you did not ask for this, ignore this e-mail: your password stays as it is and \
            nobody can change it without this link. If such mails keep coming, tell us.

            \(productName)
            """
        let html = """
            <!DOCTYPE html>
            <html><head><meta charset="utf-8"><meta name="referrer" content="no-referrer"><title>\(MailHTML.escape("Reset your \(productName) password"))</title></head>
            <body style="font-family: -apple-system, Helvetica, Arial, sans-serif; line-height: 1.5">
            <p>Hello,</p>
            <p>We received a request to reset the password of your \(MailHTML.escape(productName)) account.
            Open this link on your phone to choose a new password:</p>
            <p><a href="\(MailHTML.escape(link))" rel="noreferrer">Choose a new password</a></p>
            <p>The link works once and expires in <strong>\(MailHTML.escape(expiry))</strong>.</p>
            <p>If you did not ask for this, ignore this e-mail: your password stays as it is and
            nobody can change it without this link. If such mails keep coming, tell us.</p>
            <p style="color: #666; font-size: 90%">\(MailHTML.escape(fallback))<br>\(MailHTML.escape(link))</p>
            </body></html>
            """
        return OutgoingMessage(channel: .email, to: address, subject: "Reset your \(productName) password", text: text, html: html)
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
        let html = MailHTML.paragraphs(text)
        return OutgoingMessage(channel: .email, to: address, subject: "Password reset request for \(productName)", text: text, html: html)
    }

    /// Sent after a completed reset; names the second factors the reset removed because they
    /// were set up just before it (`totp`, `recovery_codes`).
    public func passwordChanged(to address: String, removedFactors: [String] = []) -> OutgoingMessage {
        let names = ["totp": "the authenticator app", "recovery_codes": "the recovery codes"]
        let removed = removedFactors.compactMap { names[$0] }
        let removal = removed.isEmpty ? "" : """


            Because they were set up in the last days before the reset, \(removed.joined(separator: " and ")) \
            of your account \(removed.count == 1 ? "was" : "were") removed too, in case someone else \
            added them: set them up again in the app if they were yours.
            """
        let text = """
            Hello,

            The password of your \(productName) account was just changed with a reset link. \
            Every device was signed out, every biometric (Face ID / Touch ID) login was turned \
            off, and no device is remembered any more: sign in again with the new password and \
            a code, then turn biometric login back on in the app.\(removal)

            If you did not do this, reset your password at once from the app and contact us: \
            someone may have access to your e-mail.

            \(productName)
            """
        return OutgoingMessage(channel: .email, to: address, subject: "Your \(productName) password was changed", text: text, html: MailHTML.paragraphs(text))
    }
}
