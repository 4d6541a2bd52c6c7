import Foundation
import LineProtocol
import ServiceKit
import XCTest

/// The seed app's transfer flow through the gateway with every real service: register, log in,
/// transfer, read the SMS (outbox) that names the amount, confirm, see the balances moved.
/// Skips itself while identity or verification are still placeholders.
final class AccountsStackTests: StackTestCase {
    override func stackOptions(_ options: inout Stack.Options) {
        guard ProcessInfo.processInfo.environment["LATCHKEY_BENCH"] == "1" else { return }
        // The throughput test sends one SMS per transfer: lift the send limits (they guard money, not speed).
        var limits: [String: String] = [:]
        for name in ["NUMBER_10M", "NUMBER_DAY", "USER_10M", "USER_DAY", "CLIENT_10M", "CLIENT_DAY", "GLOBAL_HOUR", "GLOBAL_DAY"] {
            limits["LATCHKEY_VERIFICATION_SENDS_PER_\(name)".replacingOccurrences(of: "PER_GLOBAL", with: "GLOBAL")] = "100000000"
        }
        options.serviceEnvironment["verification"] = limits
        options.serviceEnvironment["gateway"] = ["LATCHKEY_RATE_LIMITS": "auth=0:1,codes=0:1,default=0:1"]
    }

    private func signIn(_ gateway: LineClient, username: String, phone: String) throws -> (session: String, userID: String) {
        let registered = try gateway.call("identity.register", [
            "username": .string(username), "password": "Tr0ub4dor&3-horse-staple", "email": .string("\(username)@example.com"),
            "phone": .string(phone),
        ])
        guard case .success(let user) = registered.outcome, let userID = user["user_id"]?.stringValue else {
            throw XCTSkip("identity.register is not available yet: \(registered.outcome)")
        }
        let login = try gateway.result("identity.login", [
            "username": .string(username), "password": "Tr0ub4dor&3-horse-staple", "device_id": "iphone-1",
        ])
        return (try XCTUnwrap(login["session"]?.stringValue), userID)
    }

    private func smsCode(for requestID: String) throws -> (code: String, text: String) {
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline {
            if let text = outbox().last(where: { $0["request_id"]?.stringValue == requestID })?["text"]?.stringValue {
                let expression = try NSRegularExpression(pattern: "\\b(\\d{4,10})\\b")
                let match = try XCTUnwrap(expression.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)), text)
                return (String(text[Range(match.range(at: 1), in: text)!]), text)
            }
            usleep(50_000)
        }
        throw XCTSkip("no SMS for \(requestID): verification is not available yet")
    }

    func testSeedTransferFlowThroughTheGateway() throws {
        let gateway = try gateway()
        let (session, userID) = try signIn(gateway, username: "alice\(UInt32.random(in: 0...UInt32.max))", phone: "+15555550142")
        let accounts = try direct("accounts")
        for (account, amount) in [("checking", 500_000), ("saving", 1_000_000)] as [(String, Int64)] {
            _ = try accounts.result("accounts.deposit", [
                "user_id": .string(userID), "account": .string(account), "amount": .int(amount), "idempotency_key": .string("demo-\(account)"),
            ])
        }
        let ticket = try gateway.result("accounts.transfer", [
            "session": .string(session), "from": "checking", "to": "saving", "amount": 500_000, "idempotency_key": "seed-1",
        ])
        XCTAssertEqual(ticket["status"], "pending")
        let transferID = try XCTUnwrap(ticket["transfer_id"]?.stringValue)
        let requestID = try XCTUnwrap(ticket["request_id"]?.stringValue)
        let (code, text) = try smsCode(for: requestID)
        XCTAssertTrue(text.contains("5,000.00") || text.contains("5000.00"), "the SMS names the amount: \(text)")

        let wrong = code == "000000" ? "111111" : "000000"
        assertError(try gateway.call("accounts.confirm", ["session": .string(session), "transfer_id": .string(transferID), "code": .string(wrong)]),
                    "invalid_code")
        let done = try gateway.result("accounts.confirm", [
            "session": .string(session), "transfer_id": .string(transferID), "code": .string(code),
        ])
        XCTAssertEqual(done["status"], "done")
        let balances = try gateway.result("accounts.balances", ["session": .string(session)])
        XCTAssertEqual(balances["accounts"]?.arrayValue?.map { $0["balance"] }, [0, 1_500_000], "the exact balance moved")
        let history = try gateway.result("accounts.history", ["session": .string(session), "limit": 2])
        XCTAssertEqual(history["entries"]?.arrayValue?.map { $0["transfer_id"] }, [.string(transferID), .string(transferID)])

        // A second user sees nothing of the first one's transfer.
        let (other, _) = try signIn(gateway, username: "bob\(UInt32.random(in: 0...UInt32.max))", phone: "+15555550143")
        assertError(try gateway.call("accounts.confirm", ["session": .string(other), "transfer_id": .string(transferID), "code": .string(code)]),
                    "not_found")
        XCTAssertEqual(try accounts.result("accounts.audit", [:]), ["ok": true, "breaches": []])
    }

    /// Confirmed transfers per second through the gateway with every real service (each transfer:
    /// transfer + SMS in the outbox + confirm). Runs only with `LATCHKEY_BENCH=1`.
    func testConfirmedTransfersPerSecondThroughTheGateway() throws {
        try XCTSkipUnless(ProcessInfo.processInfo.environment["LATCHKEY_BENCH"] == "1", "set LATCHKEY_BENCH=1 to measure")
        let workers = 8
        let gateway = try gateway()
        let accounts = try direct("accounts")
        var sessions: [String] = []
        for index in 0..<workers {
            let (session, userID) = try signIn(gateway, username: "bench\(index)x\(UInt16.random(in: 0...UInt16.max))", phone: "+1555555\(String(format: "%04d", 200 + index))")
            _ = try accounts.result("accounts.deposit", [
                "user_id": .string(userID), "account": "checking", "amount": 100_000_000, "idempotency_key": "bench",
            ])
            sessions.append(session)
        }
        let endpoint = stack.gateway
        let signedIn = sessions
        let outboxPath = stack.outboxPath
        let counts = CountBox()
        let seconds = 5.0
        let deadline = Date().addingTimeInterval(seconds)
        let started = Date()
        DispatchQueue.concurrentPerform(iterations: workers) { worker in
            guard let client = try? LineClient(endpoint) else { return }
            var round = 0
            while Date() < deadline {
                round += 1
                guard let ticket = try? client.result("accounts.transfer", [
                    "session": .string(signedIn[worker]), "from": "checking", "to": "saving", "amount": 1,
                    "idempotency_key": .string("b\(round)"),
                ]), let transferID = ticket["transfer_id"]?.stringValue, let requestID = ticket["request_id"]?.stringValue,
                    let code = Self.code(outboxPath: outboxPath, requestID: requestID),
                    let confirmed = try? client.call("accounts.confirm", [
                        "session": .string(signedIn[worker]), "transfer_id": .string(transferID), "code": .string(code),
                    ])
                else { counts.fail(nil); continue }
                if case .failure(let error) = confirmed.outcome {
                    counts.fail(error.reason)
                    continue
                }
                counts.succeed()
            }
        }
        let elapsed = Date().timeIntervalSince(started)
        print("bench: \(Int(Double(counts.succeeded) / elapsed)) confirmed transfers/s through the gateway "
            + "(\(workers) connections, \(counts.succeeded) confirmed, \(counts.failed) failed \(counts.failureReasons), \(String(format: "%.1f", elapsed)) s)")
        for service in ["accounts", "verification", "identity"] {
            let methods = try direct(service).result("\(service).metrics", [:])["methods"]?.objectValue ?? [:]
            let latencies = methods.keys.sorted().filter { !$0.hasSuffix("metrics") && !$0.hasSuffix("health") }.map { name in
                "\(name) n=\(methods[name]?["count"]?.text ?? "?") p50=\(methods[name]?["p50_us"]?.text ?? "?")us p99=\(methods[name]?["p99_us"]?.text ?? "?")us"
            }
            print("bench: \(service): \(latencies.joined(separator: "; "))")
        }
        XCTAssertEqual(try accounts.result("accounts.audit", [:]), ["ok": true, "breaches": []])
    }

    /// The code from the outbox, reading only its tail (the file grows during the run).
    private static func code(outboxPath: String, requestID: String) -> String? {
        for _ in 0..<200 {
            if let handle = FileHandle(forReadingAtPath: outboxPath) {
                let size = handle.seekToEndOfFile()
                handle.seek(toFileOffset: size > 65_536 ? size - 65_536 : 0)
                let tail = String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
                try? handle.close()
                for line in tail.split(separator: "\n").reversed() where line.contains(requestID) {
                    guard let message = try? JSONParser.parse(String(line)), let text = message["text"]?.stringValue,
                        let match = text.range(of: "\\b\\d{4,10}\\b", options: .regularExpression)
                    else { continue }
                    return String(text[match])
                }
            }
            usleep(5_000)
        }
        return nil
    }
}

final class CountBox: @unchecked Sendable {
    private let lock = NSLock()
    private var ok = 0
    private var bad = 0
    private var reasons: [String: Int] = [:]
    func succeed() { lock.lock(); ok += 1; lock.unlock() }
    func fail(_ reason: String?) { lock.lock(); bad += 1; reasons[reason ?? "no answer or no code", default: 0] += 1; lock.unlock() }
    var failureReasons: [String: Int] { lock.lock(); defer { lock.unlock() }; return reasons }
    var succeeded: Int { lock.lock(); defer { lock.unlock() }; return ok }
    var failed: Int { lock.lock(); defer { lock.unlock() }; return bad }
}
