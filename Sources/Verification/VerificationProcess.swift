import ServiceKit

/// Builds the verification service from configuration and serves until SIGTERM.
public enum VerificationProcess {
    public static func run(arguments: [String], environment: [String: String]) throws -> Int32 {
        let host = try ServiceHost(name: "verification", defaultPort: 7402, arguments: arguments, environment: environment)
        return host.run()
    }
}
