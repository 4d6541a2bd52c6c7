import Gateway
import ServiceKit

runExecutable("gateway") { arguments, environment in try GatewayProcess.run(arguments: arguments, environment: environment) }
