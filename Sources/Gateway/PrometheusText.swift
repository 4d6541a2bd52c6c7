import LineProtocol

/// Renders a `*.metrics` snapshot (`{"uptime_s", "methods": {name: {count, errors: {reason: n},
/// p50_us, p99_us}}, "counters": {name: n}, other numbers}`) in the Prometheus text exposition
/// format 0.0.4. Unknown members are skipped, so the snapshot may grow without breaking this.
public enum PrometheusText {
    public static func render(_ snapshot: JSON, prefix: String = "latchkey") -> String {
        var out = ""
        if let uptime = snapshot["uptime_s"]?.intValue {
            out += "# HELP \(prefix)_uptime_seconds Seconds since the process started.\n"
            out += "# TYPE \(prefix)_uptime_seconds gauge\n\(prefix)_uptime_seconds \(uptime)\n"
        }
        let methods = (snapshot["methods"]?.objectValue ?? [:]).sorted { $0.key < $1.key }
        if !methods.isEmpty {
            out += "# HELP \(prefix)_requests_total Requests answered, per method.\n# TYPE \(prefix)_requests_total counter\n"
            for (method, figures) in methods {
                out += "\(prefix)_requests_total{method=\"\(escape(method))\"} \(figures["count"]?.intValue ?? 0)\n"
            }
            out += "# HELP \(prefix)_request_errors_total Error answers, per method and reason.\n# TYPE \(prefix)_request_errors_total counter\n"
            for (method, figures) in methods {
                for (reason, count) in (figures["errors"]?.objectValue ?? [:]).sorted(by: { $0.key < $1.key }) {
                    out += "\(prefix)_request_errors_total{method=\"\(escape(method))\",reason=\"\(escape(reason))\"} \(count.intValue ?? 0)\n"
                }
            }
            out += "# HELP \(prefix)_request_duration_seconds Request latency quantiles, per method.\n# TYPE \(prefix)_request_duration_seconds summary\n"
            for (method, figures) in methods {
                for (quantile, key) in [("0.5", "p50_us"), ("0.99", "p99_us")] {
                    guard let microseconds = figures[key]?.intValue else { continue }
                    out += "\(prefix)_request_duration_seconds{method=\"\(escape(method))\",quantile=\"\(quantile)\"} \(seconds(microseconds))\n"
                }
                out += "\(prefix)_request_duration_seconds_count{method=\"\(escape(method))\"} \(figures["count"]?.intValue ?? 0)\n"
            }
        }
        let counters = (snapshot["counters"]?.objectValue ?? [:]).sorted { $0.key < $1.key }
        if !counters.isEmpty {
            out += "# HELP \(prefix)_events_total Named event counters.\n# TYPE \(prefix)_events_total counter\n"
            for (name, value) in counters {
                out += "\(prefix)_events_total{name=\"\(escape(name))\"} \(value.intValue ?? 0)\n"
            }
        }
        let skipped: Set<String> = ["uptime_s", "methods", "counters"]
        for (name, value) in (snapshot.objectValue ?? [:]).sorted(by: { $0.key < $1.key }) where !skipped.contains(name) {
            guard let number = value.intValue, isMetricName(name) else { continue }
            out += "# TYPE \(prefix)_\(name) gauge\n\(prefix)_\(name) \(number)\n"
        }
        return out
    }

    private static func seconds(_ microseconds: Int64) -> String {
        let whole = microseconds / 1_000_000
        let fraction = String(microseconds % 1_000_000)
        return "\(whole)." + String(repeating: "0", count: 6 - fraction.count) + fraction
    }

    /// Label values: backslash, double quote and newline escaped, as the format requires.
    static func escape(_ value: String) -> String {
        var out = ""
        for character in value {
            switch character {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.append(character)
            }
        }
        return out
    }

    private static func isMetricName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.allSatisfy {
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || $0 == UInt8(ascii: "_")
        }
    }
}
