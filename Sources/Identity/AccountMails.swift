import Delivery

/// The mails of the account's own life: the links that prove or change the address, and the
/// notices of a changed password, address, phone or device, and of a deletion, each in the
/// user's language (`MailCatalog`). A link mail holds one secret, its token, twice at most
/// (the app's link and the universal one); notices hold none.
extension UserNotices {
    /// The paragraph that carries a link: the universal link when the door has a public origin
    /// (it opens the app or the page), then the app's own link for a phone without it.
    private static func linkLines(_ page: AccountLinks.Page, token: String, links: AccountLinks, _ catalog: any MailCatalog) -> (text: String, primary: String) {
        let app = links.appLink(page, token: token)
        guard let web = links.webLink(page, token: token) else { return (app, app) }
        return (catalog.linkLines(web: web, app: app), web)
    }

    /// A mail whose words carry the link to `page` and how long it works.
    private func sendLink(
        _ page: AccountLinks.Page, to address: String, locale: MailLocale, token: String, links: AccountLinks, validForSeconds: Int64,
        _ words: (any MailCatalog, _ link: String, _ validFor: String) -> MailWords
    ) {
        let catalog = locale.catalog
        let (lines, primary) = Self.linkLines(page, token: token, links: links, catalog)
        send(address, words(catalog, lines, catalog.duration(seconds: validForSeconds)), in: locale, link: primary)
    }

    /// Registration's (and a resend's) mail: a link that proves the address.
    func verifyAddress(to address: String, locale: MailLocale, token: String, links: AccountLinks, validForSeconds: Int64, productName: String) {
        sendLink(.verifyEmail, to: address, locale: locale, token: token, links: links, validForSeconds: validForSeconds) { catalog, link, validFor in
            catalog.verifyAddress(product: productName, link: link, validFor: validFor)
        }
    }

    /// To an address that already has an account, when someone registers with it: the same
    /// answer was given as for a new address, so only the address's owner learns of it here.
    func registrationAttempt(to address: String, locale: MailLocale, productName: String) {
        send(address, locale.catalog.registrationAttempt(product: productName), in: locale)
    }

    /// After `identity.change_password`: every other device was signed out.
    func passwordChanged(to address: String, locale: MailLocale, device: String, at: Int64, productName: String) {
        send(address, locale.catalog.passwordChanged(product: productName, device: device, at: Self.timestamp(at)), in: locale)
    }

    /// A sign-in completed on a device the account had not trusted before (best effort).
    func newDeviceSignIn(to address: String, locale: MailLocale, device: String, from client: String?, at: Int64, productName: String) {
        send(address, locale.catalog.newDeviceSignIn(product: productName, device: device, client: client, at: Self.timestamp(at)), in: locale)
    }

    /// After `identity.change_phone`: the new number (its last digits), and the cooling-off.
    func phoneChanged(
        to address: String, locale: MailLocale, newPhone: String, device: String, at: Int64, coolingOffSeconds: Int64, productName: String
    ) {
        let catalog = locale.catalog
        send(address, catalog.phoneChanged(
            product: productName, lastDigits: String(newPhone.suffix(2)), device: device, at: Self.timestamp(at),
            coolingOff: coolingOffSeconds > 0 ? catalog.duration(seconds: coolingOffSeconds) : nil), in: locale)
    }

    /// To the new address of an e-mail change: the link that applies it.
    func confirmAddressChange(to address: String, locale: MailLocale, token: String, links: AccountLinks, validForSeconds: Int64, productName: String) {
        sendLink(.confirmEmailChange, to: address, locale: locale, token: token, links: links, validForSeconds: validForSeconds) { catalog, link, validFor in
            catalog.confirmAddressChange(product: productName, link: link, validFor: validFor)
        }
    }

    /// To the new address of an e-mail change when another account has it: nothing changed.
    /// In the language of the account that asked (the address's own account may have another).
    func addressInUse(to address: String, locale: MailLocale, productName: String) {
        send(address, locale.catalog.addressInUse(product: productName), in: locale)
    }

    /// To the old (verified) address of an e-mail change, at once: what is about to change, and
    /// the link that undoes it for a week; or, when the new address has an account already,
    /// that nothing will change (`token` nil).
    func addressChangeRequested(
        to address: String, locale: MailLocale, newAddress: String, token: String?, links: AccountLinks, validForSeconds: Int64,
        productName: String
    ) {
        guard let token else {
            send(address, locale.catalog.addressChangeRefused(product: productName, maskedNewAddress: Self.masked(newAddress)), in: locale)
            return
        }
        sendLink(.revertEmailChange, to: address, locale: locale, token: token, links: links, validForSeconds: validForSeconds) { catalog, link, validFor in
            catalog.addressChangeRequested(product: productName, maskedNewAddress: Self.masked(newAddress), link: link, validFor: validFor)
        }
    }

    /// After a revert: the address is back and every device was signed out.
    func addressRestored(to address: String, locale: MailLocale, productName: String) {
        send(address, locale.catalog.addressRestored(product: productName), in: locale)
    }

    /// The last mail of a deletion, to the address the account had: nothing is left to sign in to.
    func accountDeleted(to address: String, locale: MailLocale, productName: String) {
        send(address, locale.catalog.accountDeleted(product: productName), in: locale)
    }

    /// `a***@example.com`: enough for the owner to recognise, not a full address to a reader
    /// of the old mailbox.
    static func masked(_ address: String) -> String {
        guard let at = address.lastIndex(of: "@"), at > address.startIndex else { return "***" }
        return "\(address[address.startIndex])***\(address[at...])"
    }
}
