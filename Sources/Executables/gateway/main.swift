import Foundation
import Gateway
import ServiceKit

do {
    exit(try GatewayProcess.run(arguments: Array(CommandLine.arguments.dropFirst()), environment: ProcessInfo.processInfo.environment))
} catch {
    FileHandle.standardError.write(Data("gateway: \(error)\n".utf8))
    exit(2)
}
