import ServiceKit

/// Builds the accounts service from configuration and serves until SIGTERM.
public enum AccountsProcess {
    public static func run(arguments: [String], environment: [String: String]) throws -> Int32 {
        let host = try ServiceHost(name: "accounts", defaultPort: 7403, arguments: arguments, environment: environment)
        return host.run()
    }
}
