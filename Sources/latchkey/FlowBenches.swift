import Foundation
import Identity
import LineProtocol
import Secrets
import ServiceKit
import Storage

/// Benches of whole flows, each next to its ceiling measured in the same run.
/// `login`: password logins through the gateway at the production scrypt cost, next to the
/// bare scrypt verifications/s of this machine (all cores, same run): the ceiling, since a
/// login is one scrypt verify plus a small write.
enum LoginBench {
    static func run(_ environment: BenchEnvironment, report: BenchReport) throws {
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
        report.row("login via gateway c=\(settings.connections)", result, ratioTo: ("scrypt", scrypt))
    }
}

/// `verify`: start + check pairs straight to verification (SMS to the outbox, SQLite
/// synchronous=FULL), each with a fresh number, the code read back from the outbox like a
/// user reading an SMS. Baseline: `verification.ping` on the same connections, same run.
enum VerifyBench {
    static func run(_ environment: BenchEnvironment, report: BenchReport) throws {
        let settings = environment.settings
        let endpoint = try environment.direct("verification")
        let ping = try LoadGenerator.pipelined(
            endpoint: endpoint, method: "verification.ping", params: nil,
            settings: BenchSettings(connections: settings.connections, inflight: 1, seconds: settings.seconds, asJSON: settings.asJSON))
        report.row("ping direct verification c=\(settings.connections)", ping)
        guard let outboxPath = environment.outboxPath else { throw ConfigurationError("verify needs the bench's own stack") }
        let outbox = OutboxReader(path: outboxPath)
        let result = try LoadGenerator.closedLoop(settings: settings, prepare: { index in (try LineClient(endpoint), index) }) { state, iteration in
            let (client, index) = state
            // A fresh, valid US number per connection and iteration: +1 555 (200+index) xxxx.
            let number = String(format: "+1555%03d%04d", 200 + index % 800, iteration % 10_000)
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
        report.row("verify start+check c=\(settings.connections)", result, ratioTo: ("ping", ping.perSecond))
    }
}

enum TransferBench {
    static func run(_ environment: BenchEnvironment, report: BenchReport) throws {
        throw ConfigurationError("transfer bench lands with the accounts service")
    }
}

enum ResetBench {
    static func run(_ environment: BenchEnvironment, report: BenchReport) throws {
        throw ConfigurationError("reset bench lands with the reset service")
    }
}
