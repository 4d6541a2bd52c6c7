import Dispatch
import FoundationEssentials
import Glibc
import Identity
import LineProtocol
import Platform
import RPC

/// `overload`: logins offered straight to identity at 3x what this machine's scrypt can verify
/// (measured first, all cores, same run), open loop: requests leave on schedule whatever the
/// answers. Reports how admitted logins fare against identity's request timeout, how fast and
/// how often the rest are refused (`overloaded` / `rate_limited`), and whether any password
/// hash was spent on a request nobody waited for: login handler runs (each one scrypt verify,
/// known user or not) against logins answered by the handler.
enum OverloadBench {
    static let offeredMultiple = 3.0
    static let connections = 16

    static func run(_ environment: BenchEnvironment, report: BenchReport) throws {
        let settings = environment.settings
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let scrypt = try LoginBenchmark.scryptVerificationsPerSecond(parameters: .interactive, threads: cores, seconds: settings.seconds)
        report.ceiling("scrypt verify ln=15 (\(cores) threads)", perSecond: scrypt)
        let identity = try environment.direct("identity")
        let users = try (0..<8).map { _ in try LoginBenchmark.registerUser(gateway: environment.gateway) }
        let before = try figures(identity)
        let tally = OverloadTally()
        let perConnectionInterval = Double(connections) / (scrypt * offeredMultiple)
        let group = DispatchGroup()
        for index in 0..<connections {
            let user = users[index % users.count]
            let client = try LineClient(identity, timeoutMilliseconds: 60_000)
            let link = SharedClient(client)
            let sent = SentLog()
            group.enter()
            _ = JoinableThread(name: "overload-read") {
                defer { group.leave() }
                while let line = try? link.client.readLine() {
                    let now = MonotonicClock.nowMicroseconds()
                    guard let response = (try? JSONParser.parse(line)).flatMap(RPCResponse.decode),
                        let id = response.id.intValue, let sentAt = sent.remove(id)
                    else { continue }
                    tally.record(response.outcome, microseconds: now - sentAt)
                }
            }
            group.enter()
            _ = JoinableThread(name: "overload-send") {
                defer { group.leave() }
                let start = Date()
                var count: Int64 = 0
                while Date().timeIntervalSince(start) < settings.seconds {
                    let due = start.addingTimeInterval(Double(count) * perConnectionInterval)
                    // Pacing the load (open loop), not synchronisation.
                    Pause.microseconds(Int64(due.timeIntervalSinceNow * 1_000_000))
                    count += 1
                    let request = RPCRequest(method: "identity.login", params: [
                        "username": .string(user.username), "password": .string(user.password), "device_id": .string("overload-\(index)"),
                    ], id: .int(count))
                    sent.add(count, at: MonotonicClock.nowMicroseconds())
                    try? link.client.send(request.encoded())
                }
                // The server answers what it has read, then closes: the reader sees the end.
                link.client.finishSending()
            }
        }
        group.wait()
        let after = try figures(identity)
        report.overload(tally.summary(
            offeredPerSecond: scrypt * offeredMultiple, seconds: settings.seconds,
            handlerRuns: (after.runs - before.runs), expired: after.expired - before.expired))
    }

    /// identity's own counts: login handler runs (= scrypt verifications) and expired work.
    private static func figures(_ identity: Endpoint) throws -> (runs: Int64, expired: Int64) {
        let metrics = try LineClient(identity).result("identity.metrics")
        let login = metrics["methods"]?["identity.login"]
        let count = login?["count"]?.intValue ?? 0
        let refused = login?["errors"]?["overloaded"]?.intValue ?? 0
        let expired = metrics["counters"]?["workers.expired"]?.intValue ?? 0
        // Every login the router records ran its handler, except refusals and expired work.
        return (count - refused - expired, expired)
    }
}

/// One connection used by a sender and a reader thread at once: `send` and `readLine` share no state.
private final class SharedClient: @unchecked Sendable {
    let client: LineClient
    init(_ client: LineClient) { self.client = client }
}

/// Send times by request id on one connection.
private final class SentLog: @unchecked Sendable {
    private let lock = Lock()
    private var sentAt: [Int64: Int64] = [:]

    func add(_ id: Int64, at microseconds: Int64) {
        lock.lock()
        sentAt[id] = microseconds
        lock.unlock()
    }

    func remove(_ id: Int64) -> Int64? {
        lock.lock()
        defer { lock.unlock() }
        return sentAt.removeValue(forKey: id)
    }
}

/// Answers by kind, with latencies: admitted (answered by the handler), refused, timed out.
final class OverloadTally: @unchecked Sendable {
    private let lock = Lock()
    private var admittedMicroseconds: [Int64] = []
    private var refusedMicroseconds: [Int64] = []
    private var timeouts = 0
    private var others: [String: Int] = [:]

    func record(_ outcome: Result<JSON, RPCError>, microseconds: Int64) {
        lock.lock()
        defer { lock.unlock() }
        switch outcome {
        case .success:
            admittedMicroseconds.append(microseconds)
        case .failure(let error) where error.reason == .overloaded || error.reason == .rateLimited:
            refusedMicroseconds.append(microseconds)
        case .failure(let error) where error.reason == .timeout:
            timeouts += 1
        case .failure(let error):
            others[error.reasonText ?? "error", default: 0] += 1
        }
    }

    struct Summary {
        let offeredPerSecond: Double
        let sent: Int
        let admitted: Int
        let admittedP50Microseconds: Int64
        let admittedP99Microseconds: Int64
        let refused: Int
        let refusedP99Microseconds: Int64
        let timeouts: Int
        let otherErrors: [String: Int]
        let handlerRuns: Int64
        let expired: Int64
    }

    func summary(offeredPerSecond: Double, seconds: Double, handlerRuns: Int64, expired: Int64) -> Summary {
        lock.lock()
        defer { lock.unlock() }
        let other = others.values.reduce(0, +)
        return Summary(
            offeredPerSecond: offeredPerSecond, sent: admittedMicroseconds.count + refusedMicroseconds.count + timeouts + other,
            admitted: admittedMicroseconds.count + other,
            admittedP50Microseconds: Self.percentile(admittedMicroseconds, 0.50), admittedP99Microseconds: Self.percentile(admittedMicroseconds, 0.99),
            refused: refusedMicroseconds.count, refusedP99Microseconds: Self.percentile(refusedMicroseconds, 0.99),
            timeouts: timeouts, otherErrors: others, handlerRuns: handlerRuns, expired: expired)
    }

    private static func percentile(_ values: [Int64], _ quantile: Double) -> Int64 {
        guard !values.isEmpty else { return 0 }
        let sorted = values.sorted()
        return sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * quantile))]
    }
}
