import Accounts
import FoundationEssentials
import Identity
import LineProtocol
import Platform
import RPC
import Secrets
import ServiceKit
import StackLauncher
import Storage

/// Benches of whole flows, each next to its ceiling measured in the same run.
/// `login`: password logins through the gateway at the production scrypt cost, next to the
/// bare scrypt verifications/s of this machine (all cores, same run): the ceiling, since a
/// login is one scrypt verify plus a small write.
enum LoginBench {
    @discardableResult
    static func run(_ environment: BenchEnvironment, report: BenchReport, label: String = "login via gateway") throws -> LoadResult {
        let settings = environment.settings
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let scrypt = try LoginBenchmark.scryptVerificationsPerSecond(parameters: .interactive, threads: cores, seconds: settings.seconds)
        report.ceiling("scrypt verify ln=15 (\(cores) threads)", perSecond: scrypt)
        let gateway = try environment.gateway
        let user = try LoginBenchmark.registerUser(gateway: gateway)
        let result = try LoadGenerator.closedLoop(settings: settings, prepare: { _ in try LineClient(gateway) }) { client, iteration in
            let answer = try client.result("identity.login", [
                "username": .string(user.username), "password": .string(user.password), "device_id": .string("bench-device-\(iteration % 4)"),
            ])
            guard answer["session"]?.stringValue?.hasPrefix("lks_") == true else { throw OutboxError(message: "login gave no session") }
        }
        report.row("\(label) c=\(settings.connections)", result, ratioTo: ("scrypt", scrypt))
        return result
    }
}

/// `verify`: start + check pairs straight to verification (SMS to the outbox, SQLite
/// synchronous=FULL), each with a fresh number, the code read back from the outbox like a
/// user reading an SMS. Held, like a transfer, to the bare commit rate probed right before and
/// right after it (a pair commits twice with synchronous=FULL; group commit lets concurrent
/// pairs share them); `verification.ping` on the same connections is printed above it.
enum VerifyBench {
    @discardableResult
    static func run(_ environment: BenchEnvironment, report: BenchReport) throws -> LoadResult {
        let settings = environment.settings
        let endpoint = try environment.direct("verification")  // refuses a given gateway (--address)
        let stack = try environment.stack()
        let ping = try LoadGenerator.pipelined(
            endpoint: endpoint, method: "verification.ping", params: nil,
            settings: BenchSettings(connections: settings.connections, inflight: 1, seconds: settings.seconds, asJSON: settings.asJSON))
        report.row("ping direct verification c=\(settings.connections)", ping)
        let ceiling = try CommitCeiling(probingIn: stack.options.dataDirectory + "/commit-probe")
        let outbox = try OutboxReader(path: stack.outboxPath)
        defer { outbox.stop() }
        let result = try LoadGenerator.closedLoop(
            settings: settings, watching: try environment.watched(["verification"]), prepare: { index in (try LineClient(endpoint), index) }
        ) { state, iteration in
            let (client, index) = state
            // A fresh, valid US number per connection and iteration: +1 555 (200+index) xxxx.
            let number = "+1555" + (200 + index % 800).zeroPadded(3) + (iteration % 10_000).zeroPadded(4)
            let started = try client.result("verification.start", [
                "number": .string(number), "channel": "sms", "purpose": "transaction", "brand": "Bench",
                "payload": ["bench": .int(Int64(iteration))],
            ])
            guard let requestID = started["request_id"]?.stringValue else { throw OutboxError(message: "start gave no request_id") }
            let code = try outbox.code(for: requestID)
            let checked = try client.result("verification.check", [
                "request_id": .string(requestID), "code": .string(code), "payload": ["bench": .int(Int64(iteration))],
            ])
            guard checked["status"] == "verified" else { throw OutboxError(message: "check did not verify") }
        }
        report.row("verify start+check c=\(settings.connections)", result, ratioTo: ("commit", try ceiling.heldTo(report)))
        return result
    }
}

/// `transfer`: the seed's transfer flow through the gateway, one user per connection, in two
/// rows of the same run: confirmed by SMS code (transfer -> verification starts the code, two
/// fsyncs there -> code read from the outbox -> confirm -> verification checks it) and confirmed
/// by the device key (transfer answers the bytes to sign -> the client signs them as the
/// iPhone would -> confirm -> identity checks the signature; verification is not involved).
/// Both next to the bare SQLite commit rate with synchronous=FULL on the same disk (the ceiling),
/// measured right before and right after each row: this disk's rate drifts by half within
/// minutes on a shared machine, and a ceiling measured once skewed the later row's ratio.
enum TransferBench {
    /// `commitCeiling`: the bare commit rate of the stack's own storage when it is not the SQLite
    /// file on this disk (PostgreSQL: measured on the same server by the caller). Returns the
    /// SMS-confirmed row's result (the flow through every service).
    @discardableResult
    static func run(_ environment: BenchEnvironment, report: BenchReport, commitCeiling: Double? = nil) throws -> LoadResult {
        let settings = environment.settings
        let stack = try environment.stack()
        let ceiling = try commitCeiling.map(CommitCeiling.given) ?? CommitCeiling(probingIn: stack.options.dataDirectory + "/commit-probe")
        let gateway = stack.gateway
        let accounts = stack.endpoint("accounts")
        let identity = stack.endpoint("identity")
        let outbox = try OutboxReader(path: stack.outboxPath)
        defer { outbox.stop() }
        let flow = try environment.watched(["gateway", "identity", "verification", "accounts"])
        let result = try LoadGenerator.closedLoop(settings: settings, watching: flow, prepare: { index in
            try BenchUser.fundedSession(index: index, gateway: gateway, accounts: accounts, identity: identity)
        }) { user, iteration in
            let (client, session) = user
            let ticket = try client.result("accounts.transfer", [
                "session": .string(session), "from": "checking", "to": "saving", "amount": 1,
                "idempotency_key": .string("bench-\(iteration)"),
            ])
            guard let transferID = ticket["transfer_id"]?.stringValue, let requestID = ticket["request_id"]?.stringValue else {
                throw OutboxError(message: "transfer gave no transfer_id/request_id")
            }
            let code = try outbox.code(for: requestID)
            let done = try client.result("accounts.confirm", ["session": .string(session), "transfer_id": .string(transferID), "code": .string(code)])
            guard done["status"] == "done" else { throw OutboxError(message: "confirm did not book the transfer") }
        }
        report.row("transfer confirmed by SMS code c=\(settings.connections)", result, ratioTo: ("commit", try ceiling.heldTo(report)))
        let keyed = try LoadGenerator.closedLoop(settings: settings, watching: flow, prepare: { index in
            try BenchUser.keyedSession(index: settings.connections + index, gateway: gateway, accounts: accounts, identity: identity)
        }) { user, iteration in
            let ticket = try user.client.result("accounts.transfer", [
                "session": .string(user.session), "from": "checking", "to": "saving", "amount": 1,
                "idempotency_key": .string("bench-key-\(iteration)"), "confirm_with": "device_key", "device_id": .string(BenchUser.deviceID),
            ])
            guard let transferID = ticket["transfer_id"]?.stringValue, let sign = ticket["sign"]?.stringValue.flatMap(Base64URL.decode) else {
                throw OutboxError(message: "transfer gave no transfer_id/sign")
            }
            let done = try user.client.result("accounts.confirm", [
                "session": .string(user.session), "transfer_id": .string(transferID), "device_id": .string(BenchUser.deviceID),
                "signature": .string(Base64URL.encode(user.key.signature(for: sign))),
            ])
            guard done["status"] == "done" else { throw OutboxError(message: "confirm did not book the transfer") }
        }
        report.row("transfer confirmed by device key c=\(settings.connections)", keyed, ratioTo: ("commit", try ceiling.heldTo(report)))
        return result
    }
}

/// The commit rate a transfer or verify row is held to: one given by the caller, or the bare
/// SQLite commit probed on this disk before the first row and again after each, each row held
/// to the mean of the probes on its two sides (as `bench ping` holds its rows to Redis and to
/// direct).
final class CommitCeiling {
    private let probeDirectory: String?
    private var latest: Double

    private init(probeDirectory: String?, latest: Double) {
        self.probeDirectory = probeDirectory
        self.latest = latest
    }

    static func given(_ perSecond: Double) -> CommitCeiling { CommitCeiling(probeDirectory: nil, latest: perSecond) }

    /// Probes once now, before the first row.
    convenience init(probingIn directory: String) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        self.init(probeDirectory: directory, latest: try Self.probe(directory))
    }

    /// For the row just measured: probes again, prints the ceiling line, and answers the rate
    /// to hold the row to. A given rate is answered as it is.
    func heldTo(_ report: BenchReport) throws -> Double {
        guard let probeDirectory else { return latest }
        let before = latest
        latest = try Self.probe(probeDirectory)
        let mean = (before + latest) / 2
        report.ceiling("sqlite commit, synchronous=FULL", perSecond: mean, before: before, after: latest)
        return mean
    }

    private static func probe(_ directory: String) throws -> Double {
        try CommitProbe.commitsPerSecond(directory: directory, count: 2000, synchronous: .full)
    }
}

/// A registered, logged-in and funded user per bench connection, its phone proven (a transfer
/// code goes only to a proven phone) and its session past the second factor (a password alone
/// on a new device owes one), as the internal `identity.elevate` does after an SMS code.
enum BenchUser {
    static let deviceID = "bench"

    /// The same, with a biometry device key enrolled on the session's device (the bench plays the iPhone).
    static func keyedSession(index: Int, gateway: Endpoint, accounts: Endpoint, identity: Endpoint) throws -> (client: LineClient, session: String, key: P256PrivateKey) {
        let (client, session) = try fundedSession(index: index, gateway: gateway, accounts: accounts, identity: identity)
        let key = P256PrivateKey()
        _ = try client.result("identity.enroll_key", [
            "session": .string(session), "device_id": .string(deviceID), "public_key": .string(Base64URL.encode(key.publicKey.x963)),
            "protection": "biometry",
        ])
        return (client, session, key)
    }

    static func fundedSession(index: Int, gateway: Endpoint, accounts: Endpoint, identity: Endpoint) throws -> (LineClient, String) {
        let user = try steppedUpSession(index: index, gateway: gateway, identity: identity)
        _ = try LineClient(accounts).result("accounts.deposit", [
            "user_id": .string(user.userID), "account": "checking", "amount": 100_000_000, "idempotency_key": .string("bench-\(user.userID)"),
        ])
        return (user.client, user.session)
    }

    /// A fresh user with a proven phone, signed in on `deviceID` through the gateway and lifted
    /// to aal 2 through identity's internal `elevate` (what verification calls after a good code).
    static func steppedUpSession(index: Int, gateway: Endpoint, identity: Endpoint) throws -> (client: LineClient, session: String, userID: String) {
        let client = try LineClient(gateway)
        let name = "bench\(index)x" + Base64URL.encode(SecureRandom.bytes(4)).lowercased().filter { $0.isLetter || $0.isNumber }
        let password = "bench passphrase " + Base64URL.encode(SecureRandom.bytes(9))
        let phone = "+1555" + (200 + index % 800).zeroPadded(3) + index.zeroPadded(4)
        let registered = try client.result("identity.register", [
            "username": .string(name), "password": .string(password), "email": .string("\(name)@example.com"), "phone": .string(phone),
        ])
        guard let userID = registered["user_id"]?.stringValue else { throw OutboxError(message: "register gave no user_id") }
        let direct = try LineClient(identity)
        _ = try direct.result("identity.prove_phone", ["user_id": .string(userID), "phone": .string(phone)])
        let login = try client.result("identity.login", ["username": .string(name), "password": .string(password), "device_id": .string(deviceID)])
        guard let session = login["session"]?.stringValue else { throw OutboxError(message: "login gave no session") }
        let sessionID = try direct.result("identity.introspect", ["session": .string(session)])["session_id"] ?? .null
        _ = try direct.result("identity.elevate", ["session_id": sessionID, "factor": "sms"])
        return (client, session, userID)
    }
}

/// `reset`: `reset.request` through the gateway, each for a fresh address (the answer never
/// waits for the lookup or the mail, by design), next to `gateway.ping` on the same connections.
enum ResetBench {
    static func run(_ environment: BenchEnvironment, report: BenchReport) throws {
        let settings = environment.settings
        let gateway = try environment.gateway
        let single = BenchSettings(connections: settings.connections, inflight: 1, seconds: settings.seconds, asJSON: settings.asJSON)
        let ping = try LoadGenerator.pipelined(endpoint: gateway, method: "gateway.ping", params: nil, settings: single)
        report.row("gateway.ping c=\(settings.connections)", ping)
        let result = try LoadGenerator.closedLoop(settings: settings, prepare: { index in (try LineClient(gateway), index) }) { state, iteration in
            let (client, index) = state
            let answer = try client.result("reset.request", ["email": .string("bench-\(index)-\(iteration)@example.com")])
            guard answer["ok"] == true else { throw OutboxError(message: "reset.request did not answer ok") }
        }
        report.row("reset.request via gateway c=\(settings.connections)", result, ratioTo: ("ping", ping.perSecond))
    }
}
