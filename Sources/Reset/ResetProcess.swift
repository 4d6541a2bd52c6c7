import ServiceKit

/// Builds the reset service from configuration and serves until SIGTERM.
public enum ResetProcess {
    public static func run(arguments: [String], environment: [String: String]) throws -> Int32 {
        let host = try ServiceHost(name: "reset", defaultPort: 7404, arguments: arguments, environment: environment)
        return host.run()
    }
}
