import Verification
import ServiceKit

runExecutable("verification") { arguments, environment in try VerificationProcess.run(arguments: arguments, environment: environment) }
