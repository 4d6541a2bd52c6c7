import Delivery
import FoundationEssentials
import Runtime

/// Mails a user about their account, after the change is committed: notices of changes, and
/// the links that verify or change the address. Best effort: the change never waits for (or
/// fails because of) the mail; the audit event is the record, and every link can be asked for
/// again. Each mail is text with an HTML alternative. The process wires it to the e-mail
/// provider (outbox in development, SMTP in production).
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

    /// After a recovery code was used: how many are left, and what to do if it was not them.
    func recoveryCodeUsed(to address: String, remaining: Int, productName: String) {
        let left = remaining == 1 ? "1 recovery code is" : "\(remaining) recovery codes are"
        let advice = remaining <= 2
            ? "Make a new set in the app soon (Security > Recovery codes): a new set replaces the old one."
            : "Each code works once; keep the rest somewhere safe."
        send(address, "A \(productName) recovery code was used", """
            Hello,

            One of your \(productName) recovery codes was just used to sign in. \(left) left. \(advice)

            If this was not you, change your password from the app at once and contact us.

            \(productName)
            """)
    }

    /// After a change to the user's second factors: what changed, on which device, when, and
    /// what to do if it was not them. Never a secret.
    func factorChanged(to address: String, _ change: FactorChange, device: String?, at: Int64, productName: String) {
        let when = Self.timestamp(at)
        let place = device.map { " from the device \"\($0)\"" } ?? ""
        send(address, "\(productName): \(change.summary)", """
            Hello,

            \(change.sentence) on your \(productName) account\(place) on \(when).

            If this was you, there is nothing to do. If it was not, someone has your password and \
            one of your second factors: reset your password at once (a reset also removes \
            factors set up in the last days) and contact us.

            \(productName)
            """)
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
    case phoneProven

    var summary: String {
        switch self {
        case .authenticatorAdded: "an authenticator app was set up"
        case .authenticatorRemoved: "an authenticator app was removed"
        case .recoveryCodesGenerated: "new recovery codes were made"
        case .deviceKeyAdded: "a device key was added"
        case .deviceKeyRemoved: "a device key was removed"
        case .phoneProven: "your phone number was confirmed"
        }
    }

    var sentence: String {
        switch self {
        case .authenticatorAdded: "An authenticator app was set up as a second factor"
        case .authenticatorRemoved: "The authenticator app was removed"
        case .recoveryCodesGenerated: "A new set of recovery codes was made (the old ones no longer work)"
        case .deviceKeyAdded(let protection):
            protection == "biometry"
                ? "A device key for Face ID / Touch ID sign-in was added"
                : "A device key (passcode allowed) was added"
        case .deviceKeyRemoved: "A device key was removed"
        case .phoneProven: "Your phone number was confirmed as a second factor"
        }
    }
}
