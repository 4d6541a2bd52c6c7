/// Turns a duration into words a person reads at a glance: "30 minutes", "1 hour and 15 minutes".
public func durationInWords(seconds: Int64) -> String {
    precondition(seconds >= 0)
    func unit(_ value: Int64, _ name: String) -> String { "\(value) \(name)\(value == 1 ? "" : "s")" }
    if seconds < 60 { return unit(seconds, "second") }
    let minutesTotal = (seconds + 30) / 60
    if minutesTotal < 60 { return unit(minutesTotal, "minute") }
    let hours = minutesTotal / 60
    let minutes = minutesTotal % 60
    if hours < 48 {
        return minutes == 0 ? unit(hours, "hour") : "\(unit(hours, "hour")) and \(unit(minutes, "minute"))"
    }
    return unit((hours + 12) / 24, "day")
}
