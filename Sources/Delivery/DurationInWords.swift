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
