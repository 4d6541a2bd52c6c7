import FoundationEssentials
import LineProtocol
import Platform
import Runtime

/// One structured line per request (the same shape as `Logger` lines: `ts`, `level`, `msg`,
/// `service`, `replica`, `rpc.*`, `net.client`), never params or tokens. Lines are built
/// directly as bytes and written in batches — at most every `flushIntervalMilliseconds` or
/// when `flushBytes` are waiting — so the log does not cost a system call per request.
///
/// What any client can send without limit (pings, unknown methods, malformed lines, rate-limited
/// requests) is counted instead, and written as one `requests summarised` line per
/// `summaryIntervalMilliseconds` with the counts: the log grows at a bounded rate whatever
/// clients send. Thread-safe.
public final class AccessLog: @unchecked Sendable {
    public typealias Sink = @Sendable ([UInt8]) -> Void

    private let lock = Lock()
    private var buffer: [UInt8] = []
    private let prefix: [UInt8]
    private let summaryPrefix: [UInt8]
    private let sink: Sink
    private let flushBytes: Int
    private let summaryIntervalMilliseconds: Int64
    private var summaryStartedMilliseconds = MonotonicClock.nowMilliseconds()
    /// Requests counted instead of logged since the last summary line: counted on every loop at
    /// once, one part per loop (see `PerLoop`), gathered when the summary is written.
    private let summarised = PerLoop(SummaryCounts())
    /// Kind names by slot, and back: a route resolves its slot once, so counting a ping hashes
    /// no name. Only routes are numbered: a kind counted by name (a refusal's reason) is counted
    /// in the loop's own part, never under this registry's lock, however many arrive at once.
    private let kindNames = NamedSlots()

    private struct SummaryCounts {
        var bySlot: [Int64] = []
        var byKind: [String: Int64] = [:]
    }
    private var cachedSecond: Int64 = -1
    private var cachedSecondText: [UInt8] = []

    public init(
        replicaID: String, flushBytes: Int = 32 * 1024, summaryIntervalMilliseconds: Int64 = 10_000, sink: @escaping Sink = AccessLog.standardError
    ) {
        precondition(summaryIntervalMilliseconds > 0)
        var replicaAndService: [UInt8] = Array(#","replica":"#.utf8)
        JSON.string(replicaID).append(to: &replicaAndService)
        replicaAndService.append(contentsOf: #","service":"gateway""#.utf8)
        self.prefix = Array(#"{"level":"info","msg":"request""#.utf8) + replicaAndService
        self.summaryPrefix = Array(#"{"level":"info","msg":"requests summarised""#.utf8) + replicaAndService
        self.sink = sink
        self.flushBytes = flushBytes
        self.summaryIntervalMilliseconds = summaryIntervalMilliseconds
        buffer.reserveCapacity(flushBytes * 2)
    }

    public static let standardError: Sink = { bytes in
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = LibC.write(2, raw.baseAddress! + offset, raw.count - offset)
                if written <= 0 { return }
                offset += written
            }
        }
    }

    public func record(requestID: String, method: String, reason: String?, durationMicroseconds: Int64, client: String?) {
        let now = WallClock.nowMilliseconds()
        lock.lock()
        buffer.append(contentsOf: prefix)
        buffer.append(contentsOf: #","net.client":"#.utf8)
        if let client { JSON.string(client).append(to: &buffer) } else { buffer.append(contentsOf: "null".utf8) }
        buffer.append(contentsOf: #","rpc.duration_us":"#.utf8)
        buffer.append(contentsOf: String(durationMicroseconds).utf8)
        buffer.append(contentsOf: #","rpc.method":"#.utf8)
        JSON.string(method).append(to: &buffer)
        buffer.append(contentsOf: #","rpc.reason":"#.utf8)
        if let reason { JSON.string(reason).append(to: &buffer) } else { buffer.append(contentsOf: "null".utf8) }
        buffer.append(contentsOf: #","rpc.request_id":"#.utf8)
        JSON.string(requestID).append(to: &buffer)
        buffer.append(contentsOf: #","ts":""#.utf8)
        appendTimestamp(milliseconds: now)
        buffer.append(contentsOf: "\"}\n".utf8)
        let full = buffer.count >= flushBytes
        lock.unlock()
        if full { flush() }
    }

    /// Where requests of one kind are counted.
    public struct SummarySlot: Sendable {
        fileprivate let index: Int
    }

    /// The slot of `kind`: the same for every call with the same name.
    public func slot(forKind kind: String) -> SummarySlot { SummarySlot(index: kindNames.number(for: kind)) }

    /// Counts a request of `kind` (`ping`, `method_not_found`, `rate_limited`, `parse_error`, ...)
    /// for the next summary line instead of logging it.
    public func summarise(_ kind: String) {
        summarised.update { $0.byKind[kind, default: 0] += 1 }
    }

    public func summarise(_ slot: SummarySlot) {
        summarised.update { counts in
            counts.bySlot.extend(toInclude: slot.index, with: 0)
            counts.bySlot[slot.index] += 1
        }
    }

    /// Writes what is waiting, with the summary line when its interval has passed. Called by a
    /// loop timer and at shutdown (`final`: the summary is written whatever the interval).
    public func flush(final: Bool = false) {
        let now = MonotonicClock.nowMilliseconds()
        lock.lock()
        if final || now - summaryStartedMilliseconds >= summaryIntervalMilliseconds {
            var bySlot: [Int64] = []
            var counts: [String: Int64] = [:]
            summarised.visitAll { part in
                for (index, count) in part.bySlot.enumerated() where count > 0 {
                    bySlot.extend(toInclude: index, with: 0)
                    bySlot[index] += count
                }
                counts.merge(part.byKind, uniquingKeysWith: +)
                part = SummaryCounts()
            }
            // Named after the visit: a slot counted in a part was numbered before it was counted.
            let names = kindNames.allNames
            for (index, count) in bySlot.enumerated() where count > 0 { counts[names[index], default: 0] += count }
            if !counts.isEmpty { appendSummaryLocked(counts, intervalMilliseconds: now - summaryStartedMilliseconds) }
            summaryStartedMilliseconds = now
        }
        guard !buffer.isEmpty else {
            lock.unlock()
            return
        }
        let bytes = buffer
        buffer.removeAll(keepingCapacity: true)
        lock.unlock()
        sink(bytes)
    }

    /// `{"level":"info","msg":"requests summarised",...,"summary.interval_ms":10002,"summary.ping":12,...}`
    private func appendSummaryLocked(_ summarised: [String: Int64], intervalMilliseconds: Int64) {
        buffer.append(contentsOf: summaryPrefix)
        buffer.append(contentsOf: #","summary.interval_ms":"#.utf8)
        buffer.append(contentsOf: String(intervalMilliseconds).utf8)
        for (kind, count) in summarised.sorted(by: { $0.key < $1.key }) {
            buffer.append(UInt8(ascii: ","))
            JSON.string("summary." + kind).append(to: &buffer)
            buffer.append(UInt8(ascii: ":"))
            buffer.append(contentsOf: String(count).utf8)
        }
        buffer.append(contentsOf: #","ts":""#.utf8)
        appendTimestamp(milliseconds: WallClock.nowMilliseconds())
        buffer.append(contentsOf: "\"}\n".utf8)
    }

    /// `2026-11-29T16:25:19.481Z`; the seconds part is formatted once a second.
    private func appendTimestamp(milliseconds: Int64) {
        let second = milliseconds / 1000
        if second != cachedSecond {
            cachedSecond = second
            // `2026-11-29T16:25:19.` of `2026-11-29T16:25:19.000Z`
            cachedSecondText = Array(LogTimestamp.format(unixMilliseconds: second * 1000).utf8.dropLast(4))
        }
        buffer.append(contentsOf: cachedSecondText)
        let fraction = Int(milliseconds % 1000)
        buffer.append(UInt8(ascii: "0") + UInt8(fraction / 100))
        buffer.append(UInt8(ascii: "0") + UInt8(fraction / 10 % 10))
        buffer.append(UInt8(ascii: "0") + UInt8(fraction % 10))
        buffer.append(UInt8(ascii: "Z"))
    }
}
