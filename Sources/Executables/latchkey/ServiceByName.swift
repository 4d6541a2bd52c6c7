import Accounts
import Gateway
import Identity
import Reset
import ServiceKit
import Verification

/// The project builds one executable, `latchkey`, and the five service names are links to it
/// (compose/build-release.sh, and the links `Stack` makes): invoked as `identity`, or as
/// `latchkey identity`, it is the identity service. One file for all five processes lets them
/// share its pages: five static executables each kept their own copy of the Swift runtime and
/// Foundation resident (the stack's summed PSS went from 31 to 71 MB); one file keeps it once.
enum ServiceByName {
    static let names: Set<String> = ["gateway", "identity", "verification", "accounts", "reset"]

    /// Runs the service `invokedAs` names (the basename of `argv[0]`), or returns when it names none.
    static func runIfService(invokedAs path: String) {
        guard let name = path.split(separator: "/").last.map(String.init), names.contains(name) else { return }
        run(name, arguments: Array(CommandLine.arguments.dropFirst()))
    }

    /// `latchkey gateway ARGS`: the service by its name as the tool's first argument, the same as
    /// invoking the gateway link.
    static func runIfService(command: String, arguments: [String]) {
        guard names.contains(command) else { return }
        run(command, arguments: arguments)
    }

    private static func run(_ name: String, arguments: [String]) -> Never {
        runExecutable(name, arguments: arguments) { arguments, environment in
            switch name {
            case "gateway": try GatewayProcess.run(arguments: arguments, environment: environment)
            case "identity": try IdentityProcess.run(arguments: arguments, environment: environment)
            case "verification": try VerificationProcess.run(arguments: arguments, environment: environment)
            case "accounts": try AccountsProcess.run(arguments: arguments, environment: environment)
            default: try ResetProcess.run(arguments: arguments, environment: environment)
            }
        }
    }
}
