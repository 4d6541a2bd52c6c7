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

    /// `link`: the paragraph of `text` that is exactly this URL becomes a button in the HTML.
    func send(_ to: String, _ subject: String, _ text: String, link: (url: String, label: String)? = nil) {
        deliver(OutgoingMessage(channel: .email, to: to, subject: subject, text: text, html: MailHTML.paragraphs(text, title: subject, link: link)))
    }

    /// Sends `words` in the HTML alternative too; `link` is the URL the words' button opens.
    func send(_ to: String, _ words: MailWords, link: String? = nil) {
        send(to, words.subject, words.text, link: link.flatMap { url in words.linkLabel.map { (url, $0) } })
    }

    /// After a recovery code was used: how many are left, and what to do if it was not them.
    func recoveryCodeUsed(to address: String, locale: MailLocale, remaining: Int, productName: String) {
        send(address, locale.catalog.recoveryCodeUsed(product: productName, remaining: remaining))
    }

    /// After a change to the user's second factors: what changed, on which device, when, and
    /// what to do if it was not them. Never a secret.
    func factorChanged(to address: String, locale: MailLocale, _ change: FactorChange, device: String?, at: Int64, productName: String) {
        send(address, locale.catalog.factorChanged(product: productName, change: change, device: device, at: Self.timestamp(at)))
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
