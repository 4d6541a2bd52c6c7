import Foundation

/// The languages the server writes account mails in.
public enum MailLanguage: String, Codable, Sendable, CaseIterable {
    case english = "en"
    case french = "fr"
    case russian = "ru"

    /// The language of `locale` when the server writes it, else nil (the server then writes English).
    public init?(locale: Locale) {
        // "fr_FR", "ru", "en-US": the language is the identifier's first run of letters.
        self.init(rawValue: String(locale.identifier.prefix { $0.isLetter }).lowercased())
    }
}
