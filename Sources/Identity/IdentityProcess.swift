import ServiceKit

/// Builds the identity service from configuration and serves until SIGTERM.
public enum IdentityProcess {
    public static func run(arguments: [String], environment: [String: String]) throws -> Int32 {
        let host = try ServiceHost(name: "identity", defaultPort: 7401, arguments: arguments, environment: environment)
        return host.run()
    }
}
