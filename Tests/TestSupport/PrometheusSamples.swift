import Foundation

/// The samples of a Prometheus text exposition (`name{label="value",...} number` lines), read
/// the way a scraper reads them, so a test can ask for one figure by name and labels.
public struct PrometheusSamples {
    public struct Sample: Equatable {
        public let name: String
        public let labels: [String: String]
        public let value: Double
    }

    public let samples: [Sample]

    public init(_ text: String) {
        samples = text.split(separator: "\n").compactMap { line in line.hasPrefix("#") ? nil : Self.sample(Substring(line)) }
    }

    /// The value of the sample with exactly these labels, or nil.
    public func value(_ name: String, _ labels: [String: String] = [:]) -> Double? {
        samples.first { $0.name == name && $0.labels == labels }?.value
    }

    /// The value as a count, 0 when the sample is absent (a counter not yet incremented).
    public func count(_ name: String, _ labels: [String: String] = [:]) -> Int64 { Int64(value(name, labels) ?? 0) }

    /// The gateway's figures by their names in `gateway.metrics`' JSON: requests of a method, its
    /// errors with one reason, and a named event counter.
    public func requests(_ method: String) -> Int64 { count("latchkey_requests_total", ["method": method]) }
    public func errors(_ method: String, reason: String) -> Int64 { count("latchkey_request_errors_total", ["method": method, "reason": reason]) }
    public func events(_ name: String) -> Int64 { count("latchkey_events_total", ["name": name]) }

    private static func sample(_ line: Substring) -> Sample? {
        guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { return nil }
        let series = line[..<space]
        guard let brace = series.firstIndex(of: "{") else { return Sample(name: String(series), labels: [:], value: value) }
        guard series.last == "}" else { return nil }
        var labels: [String: String] = [:]
        var rest = series[series.index(after: brace)..<series.index(before: series.endIndex)]
        while let equals = rest.firstIndex(of: "=") {
            let key = String(rest[..<equals]).trimmingCharacters(in: [","])
            var index = rest.index(equals, offsetBy: 2, limitedBy: rest.endIndex) ?? rest.endIndex
            var text = ""
            while index < rest.endIndex, rest[index] != "\"" {
                if rest[index] == "\\", rest.index(after: index) < rest.endIndex {
                    index = rest.index(after: index)
                    text.append(rest[index] == "n" ? "\n" : rest[index])
                } else {
                    text.append(rest[index])
                }
                index = rest.index(after: index)
            }
            labels[key] = text
            rest = index < rest.endIndex ? rest[rest.index(after: index)...] : ""
        }
        return Sample(name: String(series[..<brace]), labels: labels, value: value)
    }
}
