import FoundationEssentials
import Platform

/// Thrown when `--help` (or `-h`) is on the command line: the caller prints `usage` to stdout
/// and exits 0, before anything else is read or started.
public struct HelpRequested: Error, Sendable {
    public let usage: String

    public init(usage: String) { self.usage = usage }

    /// Throws when the arguments ask for help.
    public static func check(_ arguments: [String], usage: @autoclosure () -> String) throws(HelpRequested) {
        if arguments.contains("--help") || arguments.contains("-h") { throw HelpRequested(usage: usage()) }
    }
}

public enum Usage {
    /// A usage line, then every option with its variable, default and meaning.
    public static func text(_ synopsis: String, options: [ConfigOption]) -> String {
        var lines = ["usage: \(synopsis)"]
        if !options.isEmpty {
            lines.append("")
            lines.append("options (each flag can also be set by its environment variable):")
            // A switch stands alone (`--demo`); every other flag takes a value.
            let spelled = options.map { $0.isSwitch ? $0.flag : "\($0.flag) VALUE" }
            let width = min(36, (spelled.map(\.count).max() ?? 0) + 1)
            for (option, spelling) in zip(options, spelled) {
                let flag = spelling + String(repeating: " ", count: max(width, spelling.count + 1) - spelling.count)
                let defaultText = option.defaultValue.map { " (default: \($0))" } ?? ""
                lines.append("  \(flag) \(option.environmentName): \(option.help)\(defaultText)")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }
}

/// A service's whole process: runs `body` with the service's own arguments (what follows
/// `latchkey gateway`, or all of them when invoked by the service's name) and the environment,
/// prints help to stdout (exit 0) or an error to stderr (exit 2).
public func runExecutable(
    _ name: String, arguments: [String], _ body: ([String], [String: String]) throws -> Int32
) -> Never {
    TerminationSignals.block()
    do {
        exit(try body(arguments, ProcessInfo.processInfo.environment))
    } catch let help as HelpRequested {
        print(help.usage, terminator: "")
        exit(0)
    } catch {
        StandardError.write("\(name): \(error)\n")
        exit(2)
    }
}

/// SIGTERM and SIGINT are blocked in the main thread before any other thread starts, so every
/// thread inherits the mask: the signals stay pending until the service's signal source reads
/// them, however early they arrive, instead of killing a half-started process or being lost.
public enum TerminationSignals {
    public static func block() {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGTERM)
        sigaddset(&set, SIGINT)
        pthread_sigmask(SIG_BLOCK, &set, nil)
    }
}
