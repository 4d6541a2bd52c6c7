/// Turns a duration into words a person reads at a glance: "30 minutes", "1 hour and 15 minutes".
public func durationInWords(seconds: Int64) -> String {
    DurationUnits.words(seconds: seconds) { value, unit in
        let name = ["second", "minute", "hour", "day"][unit.rawValue]
        return "\(value) \(name)\(value == 1 ? "" : "s")"
    } joining: { "\($0) and \($1)" }
}

/// The rounding every language's durations share: seconds under a minute, minutes under an
/// hour, hours (with their minutes) under two days, then days. Each language names the units
/// (with its own plural rules) and joins two of them.
public enum DurationUnits {
    public enum Unit: Int, Sendable { case second, minute, hour, day }

    public static func words(seconds: Int64, name: (Int64, Unit) -> String, joining: (String, String) -> String) -> String {
        precondition(seconds >= 0)
        if seconds < 60 { return name(seconds, .second) }
        let minutesTotal = (seconds + 30) / 60
        if minutesTotal < 60 { return name(minutesTotal, .minute) }
        let hours = minutesTotal / 60
        let minutes = minutesTotal % 60
        if hours < 48 { return minutes == 0 ? name(hours, .hour) : joining(name(hours, .hour), name(minutes, .minute)) }
        return name((hours + 12) / 24, .day)
    }
}

/// The languages users read their mails in; a user without one (or with another) reads English.
public enum MailLocale: String, Sendable, CaseIterable {
    case english = "en"
    case french = "fr"
    case russian = "ru"

    /// The stored value, nil or unknown read as English.
    public init(stored: String?) { self = stored.flatMap(MailLocale.init(rawValue:)) ?? .english }

    /// "30 minutes", "1 heure et 15 minutes", "2 часа", with each language's plurals.
    public func duration(seconds: Int64) -> String {
        switch self {
        case .english: durationInWords(seconds: seconds)
        case .french: LocalDurations.french(seconds: seconds)
        case .russian: LocalDurations.russian(seconds: seconds)
        }
    }
}

/// The units named in French and Russian.
public enum LocalDurations {
    static func french(seconds: Int64) -> String {
        DurationUnits.words(seconds: seconds) { value, unit in
            let name = ["seconde", "minute", "heure", "jour"][unit.rawValue]
            return "\(value) \(name)\(value <= 1 ? "" : "s")"
        } joining: { "\($0) et \($1)" }
    }

    /// Durations read in the nominative ("1 минута", "2 часа", "1 час и 15 минут"): the texts
    /// put them where that case is right ("срок её действия — 24 часа").
    static func russian(seconds: Int64) -> String {
        DurationUnits.words(seconds: seconds) { value, unit in
            let name = switch unit {
            case .second: Self.russianPlural(value, "секунда", "секунды", "секунд")
            case .minute: Self.russianPlural(value, "минута", "минуты", "минут")
            case .hour: Self.russianPlural(value, "час", "часа", "часов")
            case .day: Self.russianPlural(value, "день", "дня", "дней")
            }
            return "\(value) \(name)"
        } joining: { "\($0) и \($1)" }
    }

    /// The Russian plural form for `n`: 1, 21 → `one`; 2–4, 22–24 → `few`; 0, 5–20, 25… → `many`.
    public static func russianPlural(_ n: Int64, _ one: String, _ few: String, _ many: String) -> String {
        let lastDigit = n % 10
        let lastTwo = n % 100
        if lastDigit == 1 && lastTwo != 11 { return one }
        if (2...4).contains(lastDigit) && !(12...14).contains(lastTwo) { return few }
        return many
    }
}
