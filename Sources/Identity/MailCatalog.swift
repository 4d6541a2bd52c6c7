import Delivery

/// A mail's words in one language: its subject, its text (paragraphs separated by a blank
/// line; a paragraph that is exactly the link's URL becomes the HTML part's button), and that
/// button's label.
struct MailWords: Sendable, Equatable {
    let subject: String
    let text: String
    var linkLabel: String? = nil
}

/// The words of every account mail in one language: one catalogue per language
/// (`EnglishMails`, `FrenchMails`, `RussianMails`), each a whole set, so a mail never mixes
/// languages. Values come in ready to print: times as `2026-12-04 18:20 UTC`, durations from
/// the catalogue's own `duration(seconds:)`, addresses masked, links whole. Every text opens
/// with a greeting and ends with the product's name on its own line, and holds no secret
/// beyond the one link it is given.
protocol MailCatalog: Sendable {
    /// "30 minutes", "1 hour and 15 minutes", "3 days", in this language.
    func duration(seconds: Int64) -> String
    /// The universal link, then the app's own link for a phone that opens links elsewhere.
    func linkLines(web: String, app: String) -> String

    func verifyAddress(product: String, link: String, validFor: String) -> MailWords
    func registrationAttempt(product: String) -> MailWords
    func passwordChanged(product: String, device: String, at: String) -> MailWords
    func newDeviceSignIn(product: String, device: String, client: String?, at: String) -> MailWords
    /// `coolingOff`: how long SMS codes confirm no money (nil: they do).
    func phoneChanged(product: String, lastDigits: String, device: String, at: String, coolingOff: String?) -> MailWords
    func confirmAddressChange(product: String, link: String, validFor: String) -> MailWords
    func addressInUse(product: String) -> MailWords
    /// To the current address: a change to an address another account has was refused.
    func addressChangeRefused(product: String, maskedNewAddress: String) -> MailWords
    /// To the current address: the change asked for, and the link that undoes it.
    func addressChangeRequested(product: String, maskedNewAddress: String, link: String, validFor: String) -> MailWords
    func addressRestored(product: String) -> MailWords
    func accountDeleted(product: String) -> MailWords
    func recoveryCodeUsed(product: String, remaining: Int) -> MailWords
    func factorChanged(product: String, change: FactorChange, device: String?, at: String) -> MailWords
}

extension MailLocale {
    var catalog: any MailCatalog {
        switch self {
        case .english: EnglishMails()
        case .french: FrenchMails()
        case .russian: RussianMails()
        }
    }
}
