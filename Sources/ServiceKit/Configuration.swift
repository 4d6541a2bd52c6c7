import Platform

/// One setting, read from `--name VALUE` (or `--name=VALUE`) or the `LATCHKEY_NAME`
/// environment variable; the flag wins. Declared once, so the operator's table of
/// variables is generated from the code and cannot drift from it.
public struct ConfigOption: Sendable, Hashable {
    public let name: String
    public let defaultValue: String?
    public let help: String

    public init(_ name: String, default defaultValue: String? = nil, help: String) {
        self.name = name
        self.defaultValue = defaultValue
        self.help = help
    }

    public var flag: String { "--\(name)" }

    /// An option whose default is a boolean is a switch: `--demo` alone means true. Every other
    /// option needs a value, so a flag never takes the next flag as its value.
    public var isSwitch: Bool { defaultValue == "false" || defaultValue == "true" }
    public var environmentName: String {
        "LATCHKEY_" + name.uppercased().replacingDashes()
    }
}

extension String {
    fileprivate func replacingDashes() -> String { String(map { $0 == "-" ? "_" : $0 }) }
}

public struct ConfigurationError: Error, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// The settings of one process: known options only, each validated when read. Fails closed: an
/// unknown flag, a flag without its value, or a `LATCHKEY_*` variable nothing reads stops it.
public struct Configuration: Sendable {
    private var values: [String: String] = [:]
    public let options: [ConfigOption]
    /// Arguments that are not flags (sub-commands, positional values), in order.
    public private(set) var positional: [String] = []

    public init(arguments: [String], environment: [String: String], options: [ConfigOption]) throws(ConfigurationError) {
        self.options = options
        try KnownEnvironment.check(environment, options: options)
        let known = Dictionary(options.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        for option in options {
            if let value = environment[option.environmentName] { values[option.name] = value }
        }
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            guard argument.hasPrefix("--") else {
                positional.append(argument)
                continue
            }
            var name = String(argument.dropFirst(2))
            var value: String?
            if let equals = name.firstIndex(of: "=") {
                value = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            guard let option = known[name] else {
                let nearest = KnownEnvironment.nearest(to: name, among: Set(known.keys))
                throw ConfigurationError("unknown flag --\(name)\(nearest.isEmpty ? "" : " (did you mean --\(nearest)?)")")
            }
            if value == nil {
                let (separate, consumed) = try Self.separateValue(of: option, next: index < arguments.count ? arguments[index] : nil)
                value = separate
                if consumed { index += 1 }
            }
            values[name] = value
        }
    }

    /// The value of `--name` given without `=`, and whether it is the next argument. A switch takes
    /// the next argument only when it is a boolean word (`--demo false`; `--demo ping` leaves `ping`
    /// positional); any other option takes it unless it is another flag.
    private static func separateValue(of option: ConfigOption, next: String?) throws(ConfigurationError) -> (String, consumed: Bool) {
        if option.isSwitch {
            guard let next, booleanWords.contains(next.lowercased()) else { return ("true", false) }
            return (next, true)
        }
        guard let next, !next.hasPrefix("--") else { throw ConfigurationError("\(option.flag) needs a value") }
        return (next, true)
    }

    private static let booleanWords: Set<String> = ["1", "true", "yes", "on", "0", "false", "no", "off"]

    public func isSet(_ option: ConfigOption) -> Bool { values[option.name] != nil }

    public func string(_ option: ConfigOption) -> String? { values[option.name] ?? option.defaultValue }

    public func requiredString(_ option: ConfigOption) throws(ConfigurationError) -> String {
        guard let value = string(option), !value.isEmpty else {
            throw ConfigurationError("\(option.flag) / \(option.environmentName) is required")
        }
        return value
    }

    public func int(_ option: ConfigOption, range: ClosedRange<Int> = 0...Int.max) throws(ConfigurationError) -> Int {
        let text = try requiredString(option)
        guard let value = Int(text), range.contains(value) else {
            throw ConfigurationError("\(option.flag) must be an integer in \(range.lowerBound)...\(range.upperBound)")
        }
        return value
    }

    public func bool(_ option: ConfigOption) throws(ConfigurationError) -> Bool {
        switch (string(option) ?? "false").lowercased() {
        case "1", "true", "yes", "on": return true
        case "0", "false", "no", "off", "": return false
        default: throw ConfigurationError("\(option.flag) must be true or false")
        }
    }

    public func endpoint(_ option: ConfigOption) throws(ConfigurationError) -> Endpoint {
        guard let endpoint = Endpoint(try requiredString(option)) else {
            throw ConfigurationError("\(option.flag) must be HOST:PORT")
        }
        return endpoint
    }

    public func endpoints(_ option: ConfigOption) throws(ConfigurationError) -> [Endpoint] {
        guard let endpoints = Endpoint.list(try requiredString(option)) else {
            throw ConfigurationError("\(option.flag) must be a comma-separated list of HOST:PORT")
        }
        return endpoints
    }
}
