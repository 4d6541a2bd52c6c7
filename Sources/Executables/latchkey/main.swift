import Foundation
import ServiceKit

/// `latchkey up | call | bench | options`: the operator's tool. Thin: each command lives in its own file.
let arguments = Array(CommandLine.arguments.dropFirst())
let environment = ProcessInfo.processInfo.environment
let usage = """
    usage:
      latchkey up [--demo] [--data-dir DIR]          run the whole stack on 127.0.0.1:7400-7404
      latchkey call METHOD ['{"json":"params"}'] [--gateway HOST:PORT]
      latchkey bench SCENARIO [--connections N] [--inflight K] [--seconds S] [--target T] [--address HOST:PORT] [--json]
                     scenarios: ping, login, verify, transfer, reset, all; overload (logins at 3x scrypt, not in all)
      latchkey backup SOURCE.sqlite DEST.sqlite      online backup of a live service database
      latchkey options                               every configuration variable, as a Markdown table

    """

do {
    guard let command = arguments.first else {
        FileHandle.standardError.write(Data(usage.utf8))
        exit(2)
    }
    let rest = Array(arguments.dropFirst())
    switch command {
    case "up": exit(try UpCommand.run(arguments: rest, environment: environment))
    case "call": exit(try CallCommand.run(arguments: rest, environment: environment))
    case "bench": exit(try BenchCommand.run(arguments: rest, environment: environment))
    case "options": exit(OptionsCommand.run())
    case "backup": exit(try BackupCommand.run(arguments: rest))
    case "help", "--help", "-h":
        print(usage, terminator: "")
        exit(0)
    default:
        FileHandle.standardError.write(Data("latchkey: unknown command \(command)\n\(usage)".utf8))
        exit(2)
    }
} catch {
    FileHandle.standardError.write(Data("latchkey: \(error)\n".utf8))
    exit(1)
}
