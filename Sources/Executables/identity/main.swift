import Identity
import ServiceKit

runExecutable("identity") { arguments, environment in try IdentityProcess.run(arguments: arguments, environment: environment) }
