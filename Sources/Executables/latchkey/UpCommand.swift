import FoundationEssentials
import LineProtocol
import Platform
import RPC
import Secrets
import ServiceKit
import StackLauncher
import Storage

/// `latchkey up [--demo] [--base-port P] [--postgres URL] [--replicas N]`: the whole stack on
/// 127.0.0.1:P..P+4 (7400 by default, the HTTP door on P+80, the gateway's metrics listener on
/// P+85) with data in ./.latchkey, this
/// run's logs followed on stderr. A child that dies is reported and the stack stops: nothing is
/// restarted silently. Ctrl-C / SIGTERM stops every child and exits 0.
enum UpCommand {
    static let demo = ConfigOption("demo", default: "false", help: "`latchkey up` also creates the seed app's demo user")
    static let demoPassword = ConfigOption("demo-password", help: "the demo user's password (default: generated and printed)")
    static let basePort = BasePort.option
    static let postgres = ConfigOption("postgres", help: "`latchkey up`: run every service on this PostgreSQL database (each in its own schema) instead of SQLite files; `latchkey bench postgres`: the server to measure on")
    static let replicas = ConfigOption("replicas", default: "1", help: "`latchkey up`: replicas per service (1-7); with SQLite only the gateway and verification replicate")
    static let options = [demo, demoPassword, basePort, postgres, replicas]

    static func run(arguments: [String], environment: [String: String]) throws -> Int32 {
        let configuration = try Configuration(
            arguments: arguments, environment: environment, options: options + [CommonOptions.dataDirectory, CommonOptions.listen])
        var stackOptions = Stack.Options(
            binDirectory: Stack.siblingBinaryDirectory(),
            dataDirectory: configuration.string(CommonOptions.dataDirectory) ?? "./.latchkey")
        // `--listen HOST:PORT` names the gateway's address; the services follow its port.
        if configuration.isSet(CommonOptions.listen) {
            let gateway = try configuration.endpoint(CommonOptions.listen)
            stackOptions.host = gateway.host
            stackOptions.basePort = gateway.port
        }
        if configuration.isSet(basePort) || stackOptions.basePort == nil {
            stackOptions.basePort = try configuration.int(basePort, range: 1...(65535 - Stack.metricsPortOffset))
        }
        stackOptions.environment = developmentSendLimits(unlessSetIn: environment)
        try chooseStorageAndReplicas(configuration, environment: environment, into: &stackOptions)
        let stack = try Stack.start(stackOptions)
        let follower = LogFollower(members: stack.members)
        printBanner(stack: stack, dataDirectory: stackOptions.dataDirectory)
        if try configuration.bool(demo) {
            do {
                try DemoUser.create(stack: stack, password: configuration.string(demoPassword))
            } catch {
                print("demo user not created: \(error)")
            }
        }
        fflush(nil)
        return waitUntilStopped(stack: stack, follower: follower)
    }

    /// `--postgres URL` puts every service on one database (a schema each); `--replicas N` then
    /// starts N of every service. SQLite files belong to one process each, so without
    /// PostgreSQL only the stateless gateway and verification (whose ids name their replica)
    /// get N.
    private static func chooseStorageAndReplicas(
        _ configuration: Configuration, environment: [String: String], into options: inout Stack.Options
    ) throws {
        let count = try configuration.int(replicas, range: 1...7)
        let url = configuration.string(postgres).flatMap { $0.isEmpty ? nil : $0 }
        if let url {
            options.environment[CommonOptions.databaseURL.environmentName] = url
            try shareServerKeys(unlessSetIn: environment, with: &options)
        }
        let replicated = url == nil ? ["gateway", "verification"] : Stack.startOrder
        for service in replicated { options.replicas[service] = count }
        if count > 1 && url == nil {
            print("note: with SQLite only the gateway and verification run \(count) replicas; add --postgres URL to replicate every service")
        }
    }

    /// On PostgreSQL every replica of identity, verification, reset and accounts must hold the
    /// same key (authenticator secrets, code hashes, keyed address hashes, page cursors): one file per key in the stack's data directory, made once
    /// (0600), handed to every replica, unless the variable is set (empty counts as unset, as it
    /// does for the services: `.env.example` ships the names empty).
    private static func shareServerKeys(unlessSetIn environment: [String: String], with options: inout Stack.Options) throws {
        try FileManager.default.createDirectory(
            atPath: options.dataDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let keys = [
            ("identity", "LATCHKEY_IDENTITY_KEY", "shared-identity.key"), ("verification", "LATCHKEY_VERIFICATION_KEY", "shared-verification.key"),
            ("reset", "LATCHKEY_RESET_KEY", "shared-reset.key"), ("accounts", "LATCHKEY_ACCOUNTS_KEY", "shared-accounts.key"),
        ]
        for (service, variable, file) in keys
        where (environment[variable] ?? "").isEmpty {
            let path = options.dataDirectory.appendingPathComponent(file)
            var key = try ServerKeyFile.load(path: path, configured: nil, option: variable)
            options.serviceEnvironment[service, default: [:]][variable] = Hex.encode(key)
            secureWipe(&key)
        }
    }

    /// `latchkey up` is a developer's stack on 127.0.0.1: the per-number, per-user and
    /// per-client SMS windows (3, 5 and 10 per 10 minutes in production) would stop a developer
    /// who runs the seed flow a few times. Raised here only, and only where not set explicitly.
    static let developmentSendLimits = [
        "LATCHKEY_VERIFICATION_SENDS_PER_NUMBER_10M": "100", "LATCHKEY_VERIFICATION_SENDS_PER_NUMBER_DAY": "1000",
        "LATCHKEY_VERIFICATION_SENDS_PER_USER_10M": "100", "LATCHKEY_VERIFICATION_SENDS_PER_USER_DAY": "1000",
        "LATCHKEY_VERIFICATION_SENDS_PER_CLIENT_10M": "300", "LATCHKEY_VERIFICATION_SENDS_PER_CLIENT_DAY": "3000",
    ]

    private static func developmentSendLimits(unlessSetIn environment: [String: String]) -> [String: String] {
        developmentSendLimits.filter { environment[$0.key] == nil }
    }

    private static func printBanner(stack: Stack, dataDirectory: String) {
        let storage = stack.options.environment[CommonOptions.databaseURL.environmentName].map { "PostgreSQL at \(PostgresURL.redacted($0))" }
        print("Latchkey is up. Data in \(storage ?? dataDirectory); messages go to \(stack.outboxPath)")
        for member in stack.members { print("  \(member.replicaID.paddedRight(14)) \(member.endpoint)") }
        if let http = stack.httpGateway { print("  \("http door".paddedRight(14)) http://\(http)") }
        if let metrics = stack.metricsEndpoint() {
            print("  \("metrics".paddedRight(14)) http://\(metrics)/metrics and /healthz (operators only)")
        }
        print("Try: latchkey call gateway.ping --gateway \(stack.gateway)   or   nc \(stack.gateway.host) \(stack.gateway.port)")
        if stack.gateway.host == "127.0.0.1" && stack.gateway.port != Int(BasePort.option.defaultValue ?? "") {
            print("The stack moved: export LATCHKEY_BASE_PORT=\(stack.gateway.port) (or pass --base-port \(stack.gateway.port)) so latchkey call, bench, the operator commands and SignInDemo find it.")
        }
        print("Development send limits: up to 100 codes per number per 10 minutes (production: see protocol/verification.md).")
        print("Press Ctrl-C to stop the stack.")
    }

    private static func waitUntilStopped(stack: Stack, follower: LogFollower) -> Int32 {
        while true {
            follower.pump()
            if StopFlag.requested {
                print("stopping...")
                stack.stop()
                follower.pump()
                return 0
            }
            if let dead = stack.members.first(where: { !$0.process.isRunning }) {
                print("\(dead.replicaID) exited with status \(dead.process.terminationStatus); stopping the stack")
                stack.stop()
                follower.pump()
                return 1
            }
            Pause.milliseconds(100)
        }
    }
}

/// Set from the signal handlers below; read by the wait loop.
enum StopFlag {
    nonisolated(unsafe) static var requested = false

    static func install() {
        signal(SIGINT) { _ in StopFlag.requested = true }
        signal(SIGTERM) { _ in StopFlag.requested = true }
    }
}

/// Copies what the children append to their log files in this run onto our stderr (an
/// earlier run's lines in the same files are not replayed).
final class LogFollower {
    private var offsets: [String: UInt64] = [:]
    private let paths: [String]

    init(members: [Stack.Member]) {
        paths = members.map(\.logPath)
        for member in members { offsets[member.logPath] = UInt64(member.logStartOffset) }
        StopFlag.install()
    }

    func pump() {
        for path in paths {
            let offset = offsets[path] ?? 0
            let appended = Stack.readBytes(path, from: Int(offset))
            if !appended.isEmpty {
                StandardError.write(appended)
                offsets[path] = offset + UInt64(appended.count)
            }
        }
    }
}

/// The seed app's demo user: `demo`, e-mail demo@example.com (verified), phone +15555550100 (proven),
/// SMS verification off, 5,000.00 in checking and 10,000.00 in saving.
enum DemoUser {
    static func create(stack: Stack, password: String?) throws {
        let chosen = password ?? Base64URL.encode(SecureRandom.bytes(12))
        let gateway = try LineClient(stack.gateway)
        let registered = try gateway.call("identity.register", [
            "username": "demo", "password": .string(chosen), "email": "demo@example.com", "phone": "+15555550100",
        ])
        let userID: String
        switch registered.outcome {
        case .success(let result):
            guard let id = result["user_id"]?.stringValue else { throw ConfigurationError("register gave no user_id") }
            userID = id
        case .failure(let error) where error.reason == .conflict:
            print("demo user already exists (its password is unchanged)")
            return
        case .failure(let error):
            throw ConfigurationError("register failed: \(error.message)")
        }
        // DESIGN: the demo phone counts as already proven by its owner, so its codes are factors at once.
        let identity = try LineClient(stack.endpoint("identity"))
        _ = try identity.result("identity.prove_phone", ["user_id": .string(userID), "phone": "+15555550100"])
        // Its address counts as verified too: nobody would click the link the registration mailed.
        _ = try identity.result("identity.operator_verify_email", ["user_id": .string(userID)])
        let accounts = try LineClient(stack.endpoint("accounts"))
        for (account, amount) in [("checking", 500_000), ("saving", 1_000_000)] {
            _ = try accounts.result("accounts.deposit", [
                "user_id": .string(userID), "account": .string(account), "amount": .int(Int64(amount)),
                "idempotency_key": .string("demo-initial-\(account)"),
            ])
        }
        print("demo user: username demo, password \(chosen), e-mail demo@example.com (the reset flow's address), phone +15555550100 (5,000.00 checking, 10,000.00 saving)")
    }
}
