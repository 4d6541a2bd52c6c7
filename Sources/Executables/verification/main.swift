import Foundation
import Verification

do {
    exit(try VerificationProcess.run(arguments: Array(CommandLine.arguments.dropFirst()), environment: ProcessInfo.processInfo.environment))
} catch {
    FileHandle.standardError.write(Data("verification: \(error)\n".utf8))
    exit(2)
}
