import Foundation
import LineProtocol
import ServiceKit

/// What one measurement found.
struct LoadResult: Sendable {
    var operations = 0
    var errors = 0
    var elapsedSeconds = 0.0
    var latenciesMicroseconds: [Int64] = []
    var sampleError: String?

    var perSecond: Double { elapsedSeconds > 0 ? Double(operations) / elapsedSeconds : 0 }
    var p50Microseconds: Int64 { percentile(0.50) }
    var p99Microseconds: Int64 { percentile(0.99) }

    private func percentile(_ quantile: Double) -> Int64 {
        guard !latenciesMicroseconds.isEmpty else { return 0 }
        let sorted = latenciesMicroseconds.sorted()
        return sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * quantile))]
    }

    mutating func merge(_ other: LoadResult) {
        operations += other.operations
        errors += other.errors
        latenciesMicroseconds += other.latenciesMicroseconds
        sampleError = sampleError ?? other.sampleError
    }
}

/// Drives load from one thread per connection over blocking sockets, so the generator
/// never shares the services' event loops. Samples from a short warm-up are dropped.
enum LoadGenerator {
    static let warmUpSeconds = 0.5

    /// Each connection keeps `inflight` requests of one method in flight (pipelining).
    static func pipelined(endpoint: Endpoint, method: String, params: JSON?, settings: BenchSettings) throws -> LoadResult {
        try runThreads(count: settings.connections, seconds: settings.seconds) { _, startMicroseconds, endMicroseconds in
            var result = LoadResult()
            let client = try LineClient(endpoint)
            var sentAt: [Int64: Int64] = [:]
            var nextID: Int64 = 0
            func sendOne() throws {
                nextID += 1
                sentAt[nextID] = MonotonicClock.nowMicroseconds()
                try client.send(RPCRequest(method: method, params: params, id: .int(nextID)).encoded())
            }
            for _ in 0..<settings.inflight { try sendOne() }
            while true {
                guard let line = try client.readLine() else { throw ConfigurationError("server closed the connection") }
                let now = MonotonicClock.nowMicroseconds()
                let response = (try? JSONParser.parse(line)).flatMap(RPCResponse.decode)
                let id = response?.id.intValue ?? 0
                if let sent = sentAt.removeValue(forKey: id), sent >= startMicroseconds {
                    result.operations += 1
                    result.latenciesMicroseconds.append(now - sent)
                    if case .failure(let error)? = response?.outcome {
                        result.errors += 1
                        result.sampleError = result.sampleError ?? "\(error.reason ?? "?"): \(error.message)"
                    }
                }
                if now >= endMicroseconds {
                    if sentAt.isEmpty { break }
                    continue
                }
                try sendOne()
            }
            return result
        }
    }

    /// Each connection repeats `operation` back to back; one operation may make several calls.
    /// `prepare` runs once per connection before timing (register users, open clients...).
    static func closedLoop<State>(
        settings: BenchSettings, prepare: @escaping @Sendable (Int) throws -> State,
        operation: @escaping @Sendable (inout State, Int) throws -> Void
    ) throws -> LoadResult {
        try runThreads(count: settings.connections, seconds: settings.seconds) { index, startMicroseconds, endMicroseconds in
            var result = LoadResult()
            var state = try prepare(index)
            var iteration = 0
            while true {
                let began = MonotonicClock.nowMicroseconds()
                if began >= endMicroseconds { break }
                do {
                    try operation(&state, iteration)
                } catch {
                    if began >= startMicroseconds {
                        result.errors += 1
                        result.sampleError = result.sampleError ?? "\(error)"
                    }
                }
                iteration += 1
                let finished = MonotonicClock.nowMicroseconds()
                if began >= startMicroseconds {
                    result.operations += 1
                    result.latenciesMicroseconds.append(finished - began)
                }
            }
            return result
        }
    }

    private static func runThreads(
        count: Int, seconds: Double,
        _ body: @escaping @Sendable (Int, Int64, Int64) throws -> LoadResult
    ) throws -> LoadResult {
        let collector = ResultCollector()
        let group = DispatchGroup()
        let start = MonotonicClock.nowMicroseconds() + Int64(warmUpSeconds * 1_000_000)
        let end = start + Int64(seconds * 1_000_000)
        for index in 0..<count {
            group.enter()
            let thread = Thread {
                do {
                    collector.add(try body(index, start, end))
                } catch {
                    collector.fail("\(error)")
                }
                group.leave()
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
        group.wait()
        var total = try collector.total()
        total.elapsedSeconds = seconds
        return total
    }
}

private final class ResultCollector: @unchecked Sendable {
    private let lock = NSLock()
    private var merged = LoadResult()
    private var failure: String?

    func add(_ result: LoadResult) {
        lock.lock()
        merged.merge(result)
        lock.unlock()
    }

    func fail(_ message: String) {
        lock.lock()
        failure = failure ?? message
        lock.unlock()
    }

    func total() throws -> LoadResult {
        lock.lock()
        defer { lock.unlock() }
        if let failure, merged.operations == 0 { throw ConfigurationError("load failed: \(failure)") }
        if let failure { merged.sampleError = merged.sampleError ?? failure }
        return merged
    }
}
