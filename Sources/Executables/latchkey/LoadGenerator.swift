import Dispatch
import FoundationEssentials
import LineProtocol
import Platform
import RPC
import ServiceKit

/// What one measurement found.
struct LoadResult: Sendable {
    var operations = 0
    var errors = 0
    /// CPU, context switches and writes per operation of each watched process (see `CostPerOperation`).
    var costPerOperation: [ProcessCost] = []
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

    /// Each connection keeps `inflight` requests of one method in flight (pipelining). The client
    /// side is kept cheap, as redis-benchmark's is, so the server is what gets measured: one thread
    /// drives every connection through `poll(2)` (a thread per connection spent the shared cores
    /// on waking 50 threads), requests are encoded from a template and sent in one write per batch
    /// of answers read, and answers are scanned for their `id` and an `error` member, not parsed.
    /// `watching`: processes whose CPU per answer the result carries, over the whole run (so every
    /// answer counts, the warm-up's too).
    static func pipelined(
        endpoint: Endpoint, method: String, params: JSON?, settings: BenchSettings, watching: [CostPerOperation.Process] = []
    ) throws -> LoadResult {
        let cost = CostPerOperation(watching)
        let template = PipelinedTemplate(method: method, params: params)
        let start = MonotonicClock.nowMicroseconds() + Int64(warmUpSeconds * 1_000_000)
        let end = start + Int64(settings.seconds * 1_000_000)
        // A server that stops answering must not hold the bench forever.
        let giveUp = end + 10_000_000
        var connections = try (0..<settings.connections).map { _ in PipelinedConnection(client: try LineClient(endpoint)) }
        var result = LoadResult()
        var answers = 0
        for index in connections.indices {
            for _ in 0..<settings.inflight { connections[index].queueOne(template) }
            try connections[index].flush()
        }
        var descriptors = connections.map { pollfd(fd: $0.client.descriptor, events: Int16(POLLIN), revents: 0) }
        while connections.contains(where: { !($0.stopping && $0.sentAt.outstanding == 0) }) {
            guard MonotonicClock.nowMicroseconds() < giveUp else { throw ConfigurationError("no answers for 10 s after the run") }
            let ready = descriptors.withUnsafeMutableBufferPointer { LibC.poll($0.baseAddress, nfds_t($0.count), 100) }
            if ready < 0 && errno != EINTR { throw SystemError(call: "poll", errno: errno) }
            for index in descriptors.indices where descriptors[index].revents != 0 {
                descriptors[index].revents = 0
                let client = connections[index].client
                // One clock read for the whole read: its answers all arrived in it.
                var readAt: Int64?
                let read = try client.readAvailableLines { line in
                    let now = readAt ?? MonotonicClock.nowMicroseconds()
                    readAt = now
                    let id = AnswerScan.id(in: line) ?? 0
                    let sent = connections[index].sentAt.take(id: id)
                    if sent != nil { answers += 1 }
                    if let sent, sent >= start {
                        result.operations += 1
                        result.latenciesMicroseconds.append(now - sent)
                        if AnswerScan.isError(line) {
                            result.errors += 1
                            result.sampleError = result.sampleError ?? String(decoding: line, as: UTF8.self)
                        }
                    }
                    connections[index].stopping = connections[index].stopping || now >= end
                    if !connections[index].stopping { connections[index].queueOne(template, at: now) }
                }
                guard read else { throw ConfigurationError("server closed the connection") }
                try connections[index].flush()
            }
        }
        result.elapsedSeconds = settings.seconds
        result.costPerOperation = cost.finish(operations: answers)
        return result
    }

    /// Each connection repeats `operation` back to back; one operation may make several calls.
    /// `prepare` runs once per connection before timing (register users, open clients...); the
    /// warm-up starts once every connection is prepared, so no preparation runs in the window.
    /// `watching`: processes whose CPU per operation the result carries, over the measured window.
    static func closedLoop<State>(
        settings: BenchSettings, watching: [CostPerOperation.Process] = [], prepare: @escaping @Sendable (Int) throws -> State,
        operation: @escaping @Sendable (inout State, Int) throws -> Void
    ) throws -> LoadResult {
        let collector = ResultCollector()
        let prepared = DispatchGroup()
        let finished = DispatchGroup()
        let gate = StartGate()
        for index in 0..<settings.connections {
            prepared.enter()
            finished.enter()
            // Detached when released: `finished` says when it ends.
            _ = JoinableThread(name: "bench-\(index)") {
                defer { finished.leave() }
                let prepareResult = Result { try prepare(index) }
                prepared.leave()
                guard case .success(var state) = prepareResult else {
                    if case .failure(let error) = prepareResult { collector.fail("\(error)") }
                    return
                }
                let (start, end) = gate.window()
                var result = LoadResult()
                var iteration = 0
                while true {
                    let began = MonotonicClock.nowMicroseconds()
                    if began >= end { break }
                    do {
                        try operation(&state, iteration)
                    } catch {
                        if began >= start {
                            result.errors += 1
                            result.sampleError = result.sampleError ?? "\(error)"
                        }
                    }
                    iteration += 1
                    let finishedAt = MonotonicClock.nowMicroseconds()
                    if began >= start {
                        result.operations += 1
                        result.latenciesMicroseconds.append(finishedAt - began)
                    }
                }
                collector.add(result)
            }
        }
        prepared.wait()
        let start = MonotonicClock.nowMicroseconds() + Int64(warmUpSeconds * 1_000_000)
        let end = start + Int64(settings.seconds * 1_000_000)
        gate.open(start: start, end: end)
        // The window's costs: read when it opens and when it closes (the threads time themselves).
        var cost: CostPerOperation?
        if !watching.isEmpty {
            sleepUntil(microseconds: start)
            cost = CostPerOperation(watching)
            sleepUntil(microseconds: end)
            cost?.stop()
        }
        finished.wait()
        var total = try collector.total()
        total.elapsedSeconds = settings.seconds
        total.costPerOperation = cost?.finish(operations: total.operations) ?? []
        return total
    }
}

/// Holds the connections of a closed-loop run until every one is prepared, then gives them the window.
private final class StartGate: @unchecked Sendable {
    private let condition = Condition()
    private var bounds: (start: Int64, end: Int64)?

    func open(start: Int64, end: Int64) {
        condition.lock()
        bounds = (start, end)
        condition.broadcast()
        condition.unlock()
    }

    func window() -> (start: Int64, end: Int64) {
        condition.lock()
        defer { condition.unlock() }
        while bounds == nil { condition.wait() }
        return bounds!
    }
}

private func sleepUntil(microseconds: Int64) {
    Pause.microseconds(microseconds - MonotonicClock.nowMicroseconds())
}

private final class ResultCollector: @unchecked Sendable {
    private let lock = Lock()
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

/// A request line with its id left open: `{"jsonrpc":"2.0","id":` + id + the rest.
private struct PipelinedTemplate {
    private let prefix: [UInt8]
    private let suffix: [UInt8]

    init(method: String, params: JSON?) {
        let encoded = RPCRequest(method: method, params: params, id: .int(0)).encoded()
        let head = Array(#"{"jsonrpc":"2.0","id":"#.utf8)
        precondition(Array(encoded.prefix(head.count)) == head, "request encoding changed")
        prefix = head
        suffix = Array(encoded[(head.count + 1)...]) + [0x0A]
    }

    func append(id: Int64, to buffer: inout [UInt8]) {
        buffer.append(contentsOf: prefix)
        buffer.append(contentsOf: String(id).utf8)
        buffer.append(contentsOf: suffix)
    }
}

/// One connection of `pipelined`: its requests in flight and the batch waiting to be written.
private struct PipelinedConnection {
    let client: LineClient
    var sentAt = SendTimes()
    var nextID: Int64 = 0
    var batch: [UInt8] = []
    var stopping = false

    init(client: LineClient) { self.client = client }

    mutating func queueOne(_ template: PipelinedTemplate, at now: Int64 = MonotonicClock.nowMicroseconds()) {
        nextID += 1
        sentAt.record(id: nextID, at: now)
        template.append(id: nextID, to: &batch)
    }

    mutating func flush() throws {
        guard !batch.isEmpty else { return }
        try client.sendRaw(batch)
        batch.removeAll(keepingCapacity: true)
    }
}

/// When each request of one connection was sent, by id: a ring, since at most `inflight`
/// (far fewer than its size) are outstanding at once.
private struct SendTimes {
    private static let size = 1 << 16
    private var ids = [Int64](repeating: 0, count: size)
    private var times = [Int64](repeating: 0, count: size)
    private(set) var outstanding = 0

    mutating func record(id: Int64, at time: Int64) {
        let slot = Int(id) & (Self.size - 1)
        ids[slot] = id
        times[slot] = time
        outstanding += 1
    }

    mutating func take(id: Int64) -> Int64? {
        let slot = Int(id) & (Self.size - 1)
        guard id > 0, ids[slot] == id else { return nil }
        ids[slot] = 0
        outstanding -= 1
        return times[slot]
    }
}

/// Reads what the bench needs from an answer line without parsing it.
enum AnswerScan {
    private static let idKey = Array(#""id":"#.utf8)
    private static let errorKey = Array(#""error":"#.utf8)

    static func id(in line: UnsafeBufferPointer<UInt8>) -> Int64? {
        guard let start = find(idKey, in: line) else { return nil }
        var value: Int64 = 0
        var index = start
        while index < line.count, line[index] >= 0x30, line[index] <= 0x39 {
            value = value * 10 + Int64(line[index] - 0x30)
            index += 1
        }
        return index > start ? value : nil
    }

    static func isError(_ line: UnsafeBufferPointer<UInt8>) -> Bool { find(errorKey, in: line) != nil }

    /// The index just after the first occurrence of `needle`.
    private static func find(_ needle: [UInt8], in line: UnsafeBufferPointer<UInt8>) -> Int? {
        guard line.count >= needle.count else { return nil }
        outer: for start in 0...(line.count - needle.count) {
            for offset in 0..<needle.count where line[start + offset] != needle[offset] { continue outer }
            return start + needle.count
        }
        return nil
    }
}
