import Accounts
import ServiceKit

runExecutable("accounts") { arguments, environment in try AccountsProcess.run(arguments: arguments, environment: environment) }
