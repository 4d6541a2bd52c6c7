import FoundationEssentials
import Platform
import ServiceKit

/// `latchkey up | call | bench | backup | options` and the operator commands
/// (`OperatorCommands`): the operator's tool, and the five services (`latchkey gateway ...`, or
/// invoked by a service's name: `ServiceByName`). Thin: each command lives in its own file.
/// Exit status: 0 done, 1 an error answer or a failure, 2 a usage error, 3 the stack could
/// not be reached.
ServiceByName.runIfService(invokedAs: CommandLine.arguments[0])
let arguments = Array(CommandLine.arguments.dropFirst())
let environment = ProcessInfo.processInfo.environment

do {
    guard let command = arguments.first, !["help", "--help", "-h"].contains(command) else {
        if arguments.isEmpty {
            StandardError.write(ToolUsage.overview)
            exit(2)
        }
        print(ToolUsage.overview, terminator: "")
        exit(0)
    }
    let rest = Array(arguments.dropFirst())
    ServiceByName.runIfService(command: command, arguments: rest)
    guard let usage = ToolUsage.of(command) else {
        StandardError.write("latchkey: unknown command \(command)\n\(ToolUsage.overview)")
        exit(2)
    }
    try HelpRequested.check(rest, usage: usage)
    switch command {
    case "up": exit(try UpCommand.run(arguments: rest, environment: environment))
    case "call": exit(try CallCommand.run(arguments: rest, environment: environment))
    case "bench": exit(try BenchCommand.run(arguments: rest, environment: environment))
    case "options": exit(OptionsCommand.run())
    case "app-attest-check": exit(try AppAttestCheckCommand.run(arguments: rest, environment: environment))
    case _ where OperatorCommands.commands[command] != nil:
        exit(try OperatorCommands.run(command, arguments: rest, environment: environment))
    default: exit(try BackupCommand.run(arguments: rest))
    }
} catch let help as HelpRequested {
    print(help.usage, terminator: "")
    exit(0)
} catch let error as ConfigurationError {
    StandardError.write("latchkey: \(error)\n")
    exit(2)
} catch let error as StackUnreachable {
    StandardError.write("latchkey: \(error)\n")
    exit(3)
} catch let error as ServiceUnreachable {
    StandardError.write("latchkey: \(error)\n")
    exit(3)
} catch {
    StandardError.write("latchkey: \(error)\n")
    exit(1)
}
