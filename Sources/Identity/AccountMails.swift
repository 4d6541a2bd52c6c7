import Delivery

/// The mails of the account's own life: the links that prove or change the address, and the
/// notices of a changed password or address. A link mail holds one secret, its token, twice
/// at most (the app's link and the universal one); notices hold none.
extension UserNotices {
    /// The paragraph that carries a link: the universal link when the door has a public origin
    /// (it opens the app or the page), then the app's own link for a phone without it.
    private static func linkLines(_ page: AccountLinks.Page, token: String, links: AccountLinks) -> (text: String, primary: String) {
        let app = links.appLink(page, token: token)
        guard let web = links.webLink(page, token: token) else { return (app, app) }
        return ("\(web)\n\nOr, on the phone where the app is installed:\n\n\(app)", web)
    }

    /// Registration's (and a resend's) mail: a link that proves the address.
    func verifyAddress(to address: String, token: String, links: AccountLinks, validForSeconds: Int64, productName: String) {
        let (lines, primary) = Self.linkLines(.verifyEmail, token: token, links: links)
        send(address, "Confirm your \(productName) e-mail address", """
            Hello,

            Please confirm that this is the address of your \(productName) account:

            \(lines)

            The link works once and expires in \(durationInWords(seconds: validForSeconds)). Password reset links \
            and security notices are sent here.

            If you did not create a \(productName) account, ignore this e-mail.

            \(productName)
            """, link: (primary, "Confirm this address"))
    }

    /// To an address that already has an account, when someone registers with it: the same
    /// answer was given as for a new address, so only the address's owner learns of it here.
    func registrationAttempt(to address: String, productName: String) {
        send(address, "Someone tried to sign up for \(productName) with your address", """
            Hello,

            Someone just tried to create a \(productName) account with this e-mail address, which \
            already belongs to an account. No second account was created.

            If it was you, you already have an account: sign in, or reset your password from the \
            app if you forgot it. If it was not you, there is nothing to do.

            \(productName)
            """)
    }

    /// After `identity.change_password`: every other device was signed out.
    func passwordChanged(to address: String, device: String, at: Int64, productName: String) {
        send(address, "Your \(productName) password was changed", """
            Hello,

            The password of your \(productName) account was changed from the device "\(device)" on \
            \(Self.timestamp(at)). Every other device was signed out.

            If this was you, there is nothing to do. If it was not, reset your password at once \
            from the app and contact us.

            \(productName)
            """)
    }

    /// A sign-in completed on a device the account had not trusted before (best effort).
    func newDeviceSignIn(to address: String, device: String, from client: String?, at: Int64, productName: String) {
        let place = client.map { " from the address \($0)" } ?? ""
        send(address, "\(productName): a sign-in on a new device", """
            Hello,

            Your \(productName) account was signed in to on the device "\(device)"\(place) on \(Self.timestamp(at)), \
            with your password and a second factor.

            If this was you, there is nothing to do. If it was not, sign out that device in the \
            app (Security > Sessions), reset your password and contact us.

            \(productName)
            """)
    }

    /// After `identity.change_phone`: the new number (its last digits), and the cooling-off.
    func phoneChanged(to address: String, newPhone: String, device: String, at: Int64, coolingOffSeconds: Int64, productName: String) {
        let hold = coolingOffSeconds > 0
            ? " For the next \(durationInWords(seconds: coolingOffSeconds)), transfers are confirmed with Face ID / Touch ID only, not by SMS."
            : ""
        send(address, "\(productName): your phone number was changed", """
            Hello,

            The phone number of your \(productName) account was changed to one ending in \(newPhone.suffix(2)) from the \
            device "\(device)" on \(Self.timestamp(at)).\(hold)

            If this was not you, someone has your password and a second factor: reset your \
            password at once and contact us.

            \(productName)
            """)
    }

    /// To the new address of an e-mail change: the link that applies it.
    func confirmAddressChange(to address: String, token: String, links: AccountLinks, validForSeconds: Int64, productName: String) {
        let (lines, primary) = Self.linkLines(.confirmEmailChange, token: token, links: links)
        send(address, "Confirm your new \(productName) e-mail address", """
            Hello,

            Someone asked to make this the e-mail address of a \(productName) account. To do it, \
            open this link:

            \(lines)

            The link works once and expires in \(durationInWords(seconds: validForSeconds)). Until it is used, \
            the account keeps its old address.

            If you did not ask for this, ignore this e-mail: nothing changes.

            \(productName)
            """, link: (primary, "Use this address"))
    }

    /// To the new address of an e-mail change when another account has it: nothing changed.
    func addressInUse(to address: String, productName: String) {
        send(address, "Your e-mail address and \(productName)", """
            Hello,

            Someone signed in to a \(productName) account asked to make this its e-mail address, but \
            the address already belongs to another account (perhaps yours). Nothing was changed.

            If you did not ask for this, there is nothing to do.

            \(productName)
            """)
    }

    /// To the old (verified) address of an e-mail change, at once: what is about to change, and
    /// the link that undoes it for a week.
    func addressChangeRequested(
        to address: String, newAddress: String, token: String?, links: AccountLinks, validForSeconds: Int64, productName: String
    ) {
        let masked = Self.masked(newAddress)
        guard let token else {
            // The new address has an account already: nothing will change, nothing to undo.
            send(address, "\(productName): a change of your e-mail address was refused", """
                Hello,

                Someone signed in to your \(productName) account asked to change its e-mail address \
                to \(masked), which belongs to another account. Nothing was changed.

                If this was not you, someone has your password and a second factor: reset your \
                password at once and contact us.

                \(productName)
                """)
            return
        }
        let (lines, primary) = Self.linkLines(.revertEmailChange, token: token, links: links)
        send(address, "\(productName): your e-mail address is being changed", """
            Hello,

            Someone signed in to your \(productName) account asked to change its e-mail address to \
            \(masked). The change applies when the new address is confirmed.

            If this was not you, open this link: it keeps (or restores) this address and signs out \
            every device.

            \(lines)

            The link works once, for \(durationInWords(seconds: validForSeconds)). Then reset your password.

            \(productName)
            """, link: (primary, "This was not me"))
    }

    /// After a revert: the address is back and every device was signed out.
    func addressRestored(to address: String, productName: String) {
        send(address, "\(productName): your e-mail address was restored", """
            Hello,

            Your \(productName) account has this e-mail address again, and every device was signed \
            out. Whoever changed it may know your password: reset it now from the app, then set up \
            biometric sign-in again.

            \(productName)
            """)
    }

    /// `a***@example.com`: enough for the owner to recognise, not a full address to a reader
    /// of the old mailbox.
    static func masked(_ address: String) -> String {
        guard let at = address.lastIndex(of: "@"), at > address.startIndex else { return "***" }
        return "\(address[address.startIndex])***\(address[at...])"
    }
}

extension UserNotices {
    /// The last mail of a deletion, to the address the account had: nothing is left to sign in to.
    func accountDeleted(to address: String, productName: String) {
        send(address, "Your \(productName) account was deleted", """
            Hello,

            Your \(productName) account was deleted, as you asked from the app. Your sign-in details, \
            devices, factors and personal data are erased; the records of past payments that the law \
            makes us keep are held under an anonymous number, apart from anything that names you.

            This is the last e-mail you will receive from us. If you did not ask for this, contact us.

            \(productName)
            """)
    }
}
