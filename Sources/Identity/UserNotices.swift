/// Tells a user by e-mail about a change to their account, after it is committed. Best effort:
/// the change never waits for (or fails because of) the mail; the audit event is the record.
/// The process wires it to the e-mail provider (outbox in development, SMTP in production).
public struct UserNotices: Sendable {
    private let send: @Sendable (_ to: String, _ subject: String, _ text: String) -> Void

    public init(send: @escaping @Sendable (_ to: String, _ subject: String, _ text: String) -> Void) {
        self.send = send
    }

    public static let none = UserNotices { _, _, _ in }

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
}
