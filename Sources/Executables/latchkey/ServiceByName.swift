import Accounts
import Gateway
import Identity
import Reset
import ServiceKit
import Verification

/// The release image installs one binary, `latchkey`, and links the five service names to it
/// (compose/build-release.sh): invoked as `identity`, it is the identity service, exactly as
/// the `identity` executable (same entry, same `runExecutable`). One file for all five processes
/// lets them share its pages: statically linked, five separate executables each kept their own
/// copy of the Swift runtime and Foundation resident (issue 19: the stack's PSS went from 31 to
/// 71 MB), one file keeps it once.
enum ServiceByName {
    /// Runs the service `invokedAs` names (the basename of `argv[0]`), or returns when it names none.
    static func runIfService(invokedAs path: String) {
        switch path.split(separator: "/").last.map(String.init) {
        case "gateway": runExecutable("gateway") { arguments, environment in try GatewayProcess.run(arguments: arguments, environment: environment) }
        case "identity": runExecutable("identity") { arguments, environment in try IdentityProcess.run(arguments: arguments, environment: environment) }
        case "verification": runExecutable("verification") { arguments, environment in try VerificationProcess.run(arguments: arguments, environment: environment) }
        case "accounts": runExecutable("accounts") { arguments, environment in try AccountsProcess.run(arguments: arguments, environment: environment) }
        case "reset": runExecutable("reset") { arguments, environment in try ResetProcess.run(arguments: arguments, environment: environment) }
        default: return
        }
    }
}
