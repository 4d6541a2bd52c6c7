import FoundationEssentials
import LineProtocol
import Platform
import ServiceKit

/// `latchkey deposit | unlock | sessions | revoke-session | keys | revoke-key | activity |
/// deletions | settle-deletion`: what an operator does to one user, through the services'
/// internal methods (`OperatorConnection`). Every change to a user who still exists is recorded
/// in the user's audit trail as an `operator.*` event. Output is a
/// table, or with `--json` the answer as one JSON line.
enum OperatorCommands {
    static let json = ConfigOption("json", default: "false", help: "print the answer as one JSON line instead of a table")
    static let idempotencyKey = ConfigOption("idempotency-key", help: "deposit: the same key books once (default: a new key, printed)")
    static let limit = ConfigOption("limit", default: "20", help: "activity: how many events, newest first (1-100)")
    static let all = ConfigOption("all", default: "false", help: "revoke-session: every session of the user")

    struct Command: Sendable {
        let synopsis: String
        let flags: [ConfigOption]
        let positional: ClosedRange<Int>
        let body: @Sendable (Invocation) throws -> Int32
    }

    static let commands: [String: Command] = [
        "deposit": Command(synopsis: "deposit USERNAME ACCOUNT AMOUNT_MINOR [--idempotency-key KEY]", flags: [idempotencyKey], positional: 3...3, body: DepositCommand.run),
        "unlock": Command(synopsis: "unlock USERNAME", flags: [], positional: 1...1, body: UserCommands.unlock),
        "sessions": Command(synopsis: "sessions USERNAME", flags: [], positional: 1...1, body: UserCommands.sessions),
        "revoke-session": Command(synopsis: "revoke-session USERNAME (SESSION_ID | --all)", flags: [all], positional: 1...2, body: UserCommands.revokeSession),
        "keys": Command(synopsis: "keys USERNAME", flags: [], positional: 1...1, body: UserCommands.keys),
        "revoke-key": Command(synopsis: "revoke-key USERNAME KEY_ID", flags: [], positional: 2...2, body: UserCommands.revokeKey),
        "activity": Command(synopsis: "activity USERNAME [--limit N]", flags: [limit], positional: 1...1, body: UserCommands.activity),
        "deletions": Command(synopsis: "deletions [USER_ID]", flags: [], positional: 0...1, body: DeletionCommands.list),
        "settle-deletion": Command(synopsis: "settle-deletion USER_ID", flags: [], positional: 1...1, body: DeletionCommands.settle),
    ]

    /// The command's own flags (command line only), then where the services are (also from the environment).
    static func usage(_ name: String) -> String? {
        guard let command = commands[name] else { return nil }
        var lines = ["usage: latchkey \(command.synopsis) [--json]", "", "flags (command line only):"]
        for flag in command.flags + [json] {
            let spelled = flag.isSwitch ? flag.flag : "\(flag.flag) VALUE"
            lines.append("  \(spelled.paddedRight(24)) \(flag.help)")
        }
        let connection = Usage.text("", options: OperatorConnection.options).split(separator: "\n", omittingEmptySubsequences: false).dropFirst().map(String.init)
        return (lines + connection).joined(separator: "\n")
    }

    static func run(_ name: String, arguments: [String], environment: [String: String]) throws -> Int32 {
        guard let command = commands[name] else { throw ConfigurationError("unknown command \(name)") }
        // The command's own flags come from the command line only: a stray `LATCHKEY_ALL=1` must
        // never turn `revoke-session` into "revoke every session". Addresses and the token do
        // come from the environment, as the services read them.
        let flags = command.flags + [json]
        let flagVariables = Set(flags.map(\.environmentName))
        let configuration = try Configuration(
            arguments: arguments, environment: environment.filter { !flagVariables.contains($0.key) }, options: OperatorConnection.options + flags)
        guard command.positional.contains(configuration.positional.count) else {
            throw ConfigurationError("usage: latchkey \(command.synopsis)")
        }
        return try command.body(Invocation(configuration: configuration, connection: try OperatorConnection(configuration)))
    }
}

/// One command's parsed command line and its way to the services.
struct Invocation {
    let configuration: Configuration
    let connection: OperatorConnection

    var positional: [String] { configuration.positional }

    /// Prints `answer` as one JSON line with `--json`, else `table()`.
    func emit(_ answer: JSON, table: () -> String) throws -> Int32 {
        if try configuration.bool(OperatorCommands.json) {
            print(String(decoding: answer.encoded(), as: UTF8.self))
        } else {
            print(table(), terminator: "")
        }
        return 0
    }
}
