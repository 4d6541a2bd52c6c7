import Delivery
import LineProtocol

/// Languages of the messages a user receives.
public enum MessageLocale: String, Sendable, CaseIterable {
    case english = "en"
    case french = "fr"
    case russian = "ru"
}

/// What a payload-bound code confirms, in words. Today: a transfer between a user's accounts
/// (`amount` in minor units, `currency`, `from`, `to`, optional `reference`); anything else is
/// named field by field so the user still sees what they confirm.
public struct PayloadSummary: Sendable, Equatable {
    public var amountMinor: Int64?
    public var currency: String?
    public var from: String?
    public var to: String?
    public var reference: String?
    public var otherFields: [(String, String)] = []

    public init(_ payload: [String: JSON]) {
        amountMinor = payload["amount"]?.intValue
        currency = payload["currency"]?.stringValue
        from = payload["from"]?.stringValue
        to = payload["to"]?.stringValue
        reference = payload["reference"]?.stringValue
        for key in payload.keys.sorted() where !["amount", "currency", "from", "to", "reference"].contains(key) {
            otherFields.append((key, Self.plain(payload[key]!)))
        }
    }

    public var isTransfer: Bool { amountMinor != nil && from != nil && to != nil }

    public static func == (lhs: PayloadSummary, rhs: PayloadSummary) -> Bool {
        lhs.amountMinor == rhs.amountMinor && lhs.currency == rhs.currency && lhs.from == rhs.from && lhs.to == rhs.to
            && lhs.reference == rhs.reference && lhs.otherFields.map(\.0) == rhs.otherFields.map(\.0)
            && lhs.otherFields.map(\.1) == rhs.otherFields.map(\.1)
    }

    private static func plain(_ value: JSON) -> String {
        switch value {
        case .string(let text): String(text.prefix(40))
        default: String(value.text.prefix(40))
        }
    }

    /// Digits after the decimal point for ISO 4217 currencies that do not use 2.
    static func exponent(of currency: String?) -> Int {
        switch currency?.uppercased() {
        case "JPY", "KRW", "VND", "CLP", "ISK", "XAF", "XOF", "UGX", "PYG": 0
        case "BHD", "KWD", "OMR", "JOD", "TND", "LYD", "IQD": 3
        default: 2
        }
    }

    /// `5000` USD -> `50.00` (en) or `50,00` (fr, ru).
    static func formatAmount(_ minor: Int64, currency: String?, locale: MessageLocale) -> String {
        let exponent = exponent(of: currency)
        let sign = minor < 0 ? "-" : ""
        let magnitude = minor.magnitude
        guard exponent > 0 else { return sign + String(magnitude) }
        var divisor: UInt64 = 1
        for _ in 0..<exponent { divisor *= 10 }
        var fraction = String(magnitude % divisor)
        while fraction.count < exponent { fraction = "0" + fraction }
        let separator = locale == .english ? "." : ","
        return sign + String(magnitude / divisor) + separator + fraction
    }
}

/// The texts of every message, per locale. Pure: the code and brand come in, text comes out.
public enum MessageCatalog {
    public static func message(
        channel: DeliveryChannel, code: String, brand: String, locale: MessageLocale, expiryMinutes: Int64,
        payload: PayloadSummary?
    ) -> (subject: String?, text: String) {
        let action = payload.map { describe($0, locale: locale) }
        switch channel {
        case .sms: return (nil, sms(code: code, brand: brand, locale: locale, minutes: expiryMinutes, action: action))
        case .voice: return (nil, voice(code: code, brand: brand, locale: locale, action: action))
        case .email: return email(code: code, brand: brand, locale: locale, minutes: expiryMinutes, action: action)
        }
    }

    /// To the number a phone change left: no code, no link, nothing to act on but a call to us.
    static func phoneNumberLeft(brand: String, locale: MessageLocale) -> String {
        switch locale {
        case .english: "\(brand): this number is no longer the phone of your account; codes now go to the new one. Not you? Contact us at once."
        case .french: "\(brand) : ce numéro n'est plus celui de votre compte ; les codes iront au nouveau. Pas vous ? Contactez-nous sans attendre."
        case .russian: "\(brand): этот номер больше не привязан к вашему аккаунту, коды придут на новый. Это были не вы? Срочно свяжитесь с нами."
        }
    }

    static func sms(code: String, brand: String, locale: MessageLocale, minutes: Int64, action: String?) -> String {
        switch (locale, action) {
        case (.english, nil): "\(brand): your code is \(code). It expires in \(minutes) min. Never share it."
        case (.english, let action?): "\(brand): code \(code) \(action). It expires in \(minutes) min. Never share it."
        case (.french, nil): "\(brand) : votre code est \(code). Il expire dans \(minutes) min. Ne le communiquez jamais."
        case (.french, let action?): "\(brand) : code \(code) \(action). Il expire dans \(minutes) min. Ne le communiquez jamais."
        case (.russian, nil): "\(brand): ваш код \(code). Он действует \(minutes) мин. Никому его не сообщайте."
        case (.russian, let action?): "\(brand): код \(code) \(action). Он действует \(minutes) мин. Никому его не сообщайте."
        }
    }

    /// Text for text-to-speech: digits spoken one by one, twice.
    static func voice(code: String, brand: String, locale: MessageLocale, action: String?) -> String {
        let spoken = code.map(String.init).joined(separator: ", ")
        switch locale {
        case .english:
            return "This is \(brand). Your code\(action.map { " " + $0 } ?? "") is: \(spoken). Again: \(spoken)."
        case .french:
            return "Ici \(brand). Votre code\(action.map { " " + $0 } ?? "") est : \(spoken). Je répète : \(spoken)."
        case .russian:
            return "Это \(brand). Ваш код\(action.map { " " + $0 } ?? ""): \(spoken). Повторяю: \(spoken)."
        }
    }

    static func email(code: String, brand: String, locale: MessageLocale, minutes: Int64, action: String?) -> (subject: String?, text: String) {
        switch locale {
        case .english:
            return ("\(brand) verification code",
                "Your \(brand) code\(action.map { " " + $0 } ?? "") is \(code).\nIt expires in \(minutes) minutes. If you did not ask for it, ignore this message and never share the code.\n")
        case .french:
            return ("Code de vérification \(brand)",
                "Votre code \(brand)\(action.map { " " + $0 } ?? "") est \(code).\nIl expire dans \(minutes) minutes. Si vous ne l'avez pas demandé, ignorez ce message et ne communiquez jamais ce code.\n")
        case .russian:
            return ("Код подтверждения \(brand)",
                "Ваш код \(brand)\(action.map { " " + $0 } ?? ""): \(code).\nОн действует \(minutes) мин. Если вы его не запрашивали, проигнорируйте это письмо и никому не сообщайте код.\n")
        }
    }

    /// "to move 50.00 USD from checking to saving" and its translations.
    public static func describe(_ payload: PayloadSummary, locale: MessageLocale) -> String {
        var text: String
        if payload.isTransfer, let amount = payload.amountMinor, let from = payload.from, let to = payload.to {
            let money = PayloadSummary.formatAmount(amount, currency: payload.currency, locale: locale)
                + (payload.currency.map { " " + $0.uppercased() } ?? "")
            switch locale {
            case .english: text = "to move \(money) from \(from) to \(to)"
            case .french: text = "pour virer \(money) \(frenchFrom(from)) \(frenchTo(to))"
            case .russian: text = "для перевода \(money) \(russianFrom(from)) \(russianTo(to))"
            }
        } else {
            switch locale {
            case .english: text = "to confirm"
            case .french: text = "pour confirmer"
            case .russian: text = "для подтверждения"
            }
            let fields = payload.otherFields + (payload.amountMinor.map { [("amount", String($0))] } ?? [])
            if !fields.isEmpty { text += " " + fields.map { "\($0.0) \($0.1)" }.joined(separator: ", ") }
        }
        if let reference = payload.reference { text += " (\(String(reference.prefix(40))))" }
        return text
    }

    private static func frenchFrom(_ account: String) -> String {
        switch account {
        case "checking": "du compte courant"
        case "saving": "du compte épargne"
        default: "de \(account)"
        }
    }

    private static func frenchTo(_ account: String) -> String {
        switch account {
        case "checking": "vers le compte courant"
        case "saving": "vers le compte épargne"
        default: "vers \(account)"
        }
    }

    private static func russianFrom(_ account: String) -> String {
        switch account {
        case "checking": "с текущего счёта"
        case "saving": "со сберегательного счёта"
        default: "со счёта \(account)"
        }
    }

    private static func russianTo(_ account: String) -> String {
        switch account {
        case "checking": "на текущий счёт"
        case "saving": "на сберегательный счёт"
        default: "на счёт \(account)"
        }
    }
}
