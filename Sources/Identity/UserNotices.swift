import Delivery
import FoundationEssentials
import Runtime

/// Mails a user about their account, after the change is committed: notices of changes, and
/// the links that verify or change the address. The change never waits for (or fails because
/// of) the provider: the process hands each mail to identity's durable `MailQueue`, whose
/// workers send it and retry it while the provider fails. Each mail is text with an HTML
/// alternative.
public struct UserNotices: Sendable {
    private let deliver: @Sendable (OutgoingMessage) -> Void

    public init(deliver: @escaping @Sendable (OutgoingMessage) -> Void) {
        self.deliver = deliver
    }

    public static let none = UserNotices { _ in }

    /// Sends `words`, written in `locale`, with an HTML alternative; `link` is the URL the
    /// words' button opens (the paragraph of the text that is exactly this URL).
    func send(_ to: String, _ words: MailWords, in locale: MailLocale, link: String? = nil) {
        let button = link.flatMap { url in words.linkLabel.map { (url: url, label: $0) } }
        deliver(OutgoingMessage(
            channel: .email, to: to, subject: words.subject, text: words.text,
            html: MailHTML.paragraphs(words.text, language: locale.rawValue, title: words.subject, link: button)))
    }

    /// After a recovery code was used: how many are left, and what to do if it was not them.
    func recoveryCodeUsed(to address: String, locale: MailLocale, remaining: Int, productName: String) {
        send(address, locale.catalog.recoveryCodeUsed(product: productName, remaining: remaining), in: locale)
    }

    /// After a change to the user's second factors: what changed, on which device, when, and
    /// what to do if it was not them. Never a secret.
    func factorChanged(to address: String, locale: MailLocale, _ change: FactorChange, device: String?, at: Int64, productName: String) {
        send(address, locale.catalog.factorChanged(product: productName, change: change, device: device, at: Self.timestamp(at)), in: locale)
    }

    /// `2026-12-04 18:20 UTC`: the same for every reader, whatever their locale.
    static func timestamp(_ seconds: Int64) -> String {
        LogTimestamp.readable(unixSeconds: seconds, withSeconds: false) + " UTC"
    }
}

/// A change to a user's second factors that the owner is told of by e-mail at once.
enum FactorChange: Sendable, Equatable {
    case authenticatorAdded, authenticatorRemoved, recoveryCodesGenerated
    case deviceKeyAdded(protection: String), deviceKeyRemoved
    case passkeyAdded(name: String), passkeyRemoved
    case phoneProven
}
