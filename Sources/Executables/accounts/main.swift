import Foundation
import Accounts

do {
    exit(try AccountsProcess.run(arguments: Array(CommandLine.arguments.dropFirst()), environment: ProcessInfo.processInfo.environment))
} catch {
    FileHandle.standardError.write(Data("accounts: \(error)\n".utf8))
    exit(2)
}
