import Delivery

/// Every account mail in English (the default).
struct EnglishMails: MailCatalog {
    func duration(seconds: Int64) -> String { durationInWords(seconds: seconds) }

    func linkLines(web: String, app: String) -> String {
        "\(web)\n\nOr, on the phone where the app is installed:\n\n\(app)"
    }

    func verifyAddress(product: String, link: String, validFor: String) -> MailWords {
        MailWords(subject: "Confirm your \(product) e-mail address", text: """
            Hello,

            Please confirm that this is the address of your \(product) account:

            \(link)

            The link works once and expires in \(validFor). Password reset links and security \
            notices are sent here.

            If you did not create a \(product) account, ignore this e-mail.

            \(product)
            """, linkLabel: "Confirm this address")
    }

    func registrationAttempt(product: String) -> MailWords {
        MailWords(subject: "Someone tried to sign up for \(product) with your address", text: """
            Hello,

            Someone just tried to create a \(product) account with this e-mail address, which \
            already belongs to an account. No second account was created.

            If it was you, you already have an account: sign in, or reset your password from the \
            app if you forgot it. If it was not you, there is nothing to do.

            \(product)
            """)
    }

    func passwordChanged(product: String, device: String, at: String) -> MailWords {
        MailWords(subject: "Your \(product) password was changed", text: """
            Hello,

            The password of your \(product) account was changed from the device "\(device)" on \
            \(at). Every other device was signed out.

            If this was you, there is nothing to do. If it was not, reset your password at once \
            from the app and contact us.

            \(product)
            """)
    }

    func newDeviceSignIn(product: String, device: String, client: String?, at: String) -> MailWords {
        let place = client.map { " from the address \($0)" } ?? ""
        return MailWords(subject: "\(product): a sign-in on a new device", text: """
            Hello,

            Your \(product) account was signed in to on the device "\(device)"\(place) on \(at), \
            with your password and a second factor.

            If this was you, there is nothing to do. If it was not, sign out that device in the \
            app (Security > Sessions), reset your password and contact us.

            \(product)
            """)
    }

    func phoneChanged(product: String, lastDigits: String, device: String, at: String, coolingOff: String?) -> MailWords {
        let hold = coolingOff.map { " For the next \($0), transfers are confirmed with Face ID / Touch ID only, not by SMS." } ?? ""
        return MailWords(subject: "\(product): your phone number was changed", text: """
            Hello,

            The phone number of your \(product) account was changed to one ending in \(lastDigits) \
            from the device "\(device)" on \(at).\(hold)

            If this was not you, someone has your password and a second factor: reset your \
            password at once and contact us.

            \(product)
            """)
    }

    func confirmAddressChange(product: String, link: String, validFor: String) -> MailWords {
        MailWords(subject: "Confirm your new \(product) e-mail address", text: """
            Hello,

            Someone asked to make this the e-mail address of a \(product) account. To do it, open \
            this link:

            \(link)

            The link works once and expires in \(validFor). Until it is used, the account keeps \
            its old address.

            If you did not ask for this, ignore this e-mail: nothing changes.

            \(product)
            """, linkLabel: "Use this address")
    }

    func addressInUse(product: String) -> MailWords {
        MailWords(subject: "Your e-mail address and \(product)", text: """
            Hello,

            Someone signed in to a \(product) account asked to make this its e-mail address, but \
            the address already belongs to another account (perhaps yours). Nothing was changed.

            If you did not ask for this, there is nothing to do.

            \(product)
            """)
    }

    func addressChangeRefused(product: String, maskedNewAddress: String) -> MailWords {
        MailWords(subject: "\(product): a change of your e-mail address was refused", text: """
            Hello,

            Someone signed in to your \(product) account asked to change its e-mail address to \
            \(maskedNewAddress), which belongs to another account. Nothing was changed.

            If this was not you, someone has your password and a second factor: reset your \
            password at once and contact us.

            \(product)
            """)
    }

    func addressChangeRequested(product: String, maskedNewAddress: String, link: String, validFor: String) -> MailWords {
        MailWords(subject: "\(product): your e-mail address is being changed", text: """
            Hello,

            Someone signed in to your \(product) account asked to change its e-mail address to \
            \(maskedNewAddress). The change applies when the new address is confirmed.

            If this was not you, open this link: it keeps (or restores) this address and signs out \
            every device.

            \(link)

            The link works once, for \(validFor). Then reset your password.

            \(product)
            """, linkLabel: "This was not me")
    }

    func addressRestored(product: String) -> MailWords {
        MailWords(subject: "\(product): your e-mail address was restored", text: """
            Hello,

            Your \(product) account has this e-mail address again, and every device was signed \
            out. Whoever changed it may know your password: reset it now from the app, then set up \
            biometric sign-in again.

            \(product)
            """)
    }

    func accountDeleted(product: String) -> MailWords {
        MailWords(subject: "Your \(product) account was deleted", text: """
            Hello,

            Your \(product) account was deleted, as you asked from the app. Your sign-in details, \
            devices, factors and personal data are erased; the records of past payments that the \
            law makes us keep are held under an anonymous number, apart from anything that names you.

            This is the last e-mail you will receive from us. If you did not ask for this, contact us.

            \(product)
            """)
    }

    func recoveryCodeUsed(product: String, remaining: Int) -> MailWords {
        let left = remaining == 1 ? "1 recovery code is" : "\(remaining) recovery codes are"
        let advice = remaining <= 2
            ? "Make a new set in the app soon (Security > Recovery codes): a new set replaces the old one."
            : "Each code works once; keep the rest somewhere safe."
        return MailWords(subject: "A \(product) recovery code was used", text: """
            Hello,

            One of your \(product) recovery codes was just used to sign in. \(left) left. \(advice)

            If this was not you, change your password from the app at once and contact us.

            \(product)
            """)
    }

    func factorChanged(product: String, change: FactorChange, device: String?, at: String) -> MailWords {
        let (summary, sentence): (String, String) = switch change {
        case .authenticatorAdded: ("an authenticator app was set up", "An authenticator app was set up as a second factor")
        case .authenticatorRemoved: ("an authenticator app was removed", "The authenticator app was removed")
        case .recoveryCodesGenerated: ("new recovery codes were made", "A new set of recovery codes was made (the old ones no longer work)")
        case .deviceKeyAdded(let protection):
            ("a device key was added", protection == "biometry"
                ? "A device key for Face ID / Touch ID sign-in was added" : "A device key (passcode allowed) was added")
        case .deviceKeyRemoved: ("a device key was removed", "A device key was removed")
        case .passkeyAdded(let name): ("a passkey was added", "A passkey (\"\(name)\") was added for sign-in")
        case .passkeyRemoved: ("a passkey was removed", "A passkey was removed")
        case .phoneProven: ("your phone number was confirmed", "Your phone number was confirmed as a second factor")
        }
        let place = device.map { " from the device \"\($0)\"" } ?? ""
        return MailWords(subject: "\(product): \(summary)", text: """
            Hello,

            \(sentence) on your \(product) account\(place) on \(at).

            If this was you, there is nothing to do. If it was not, someone has your password and \
            one of your second factors: reset your password at once (a reset also removes factors \
            set up in the last days) and contact us.

            \(product)
            """)
    }
}
