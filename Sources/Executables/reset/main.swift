import Foundation
import Reset

do {
    exit(try ResetProcess.run(arguments: Array(CommandLine.arguments.dropFirst()), environment: ProcessInfo.processInfo.environment))
} catch {
    FileHandle.standardError.write(Data("reset: \(error)\n".utf8))
    exit(2)
}
