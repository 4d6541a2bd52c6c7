import Foundation
import Identity

do {
    exit(try IdentityProcess.run(arguments: Array(CommandLine.arguments.dropFirst()), environment: ProcessInfo.processInfo.environment))
} catch {
    FileHandle.standardError.write(Data("identity: \(error)\n".utf8))
    exit(2)
}
