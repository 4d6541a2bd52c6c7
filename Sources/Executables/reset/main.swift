import Reset
import ServiceKit

runExecutable("reset") { arguments, environment in try ResetProcess.run(arguments: arguments, environment: environment) }
