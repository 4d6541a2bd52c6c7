import FoundationEssentials
import LineProtocol
import Platform

/// Latency in a fixed set of log-spaced buckets (4 per power of two, microseconds):
/// constant memory, cheap to record, percentiles within ~19% of the truth.
public struct LatencyHistogram: Sendable {
    private static let bucketCount = 4 * 34
    private var buckets = [Int64](repeating: 0, count: bucketCount)
    public private(set) var count: Int64 = 0

    public init() {}

    public mutating func record(microseconds: Int64) {
        buckets[Self.bucket(for: max(1, microseconds))] += 1
        count += 1
    }

    public mutating func merge(_ other: LatencyHistogram) {
        for index in buckets.indices { buckets[index] += other.buckets[index] }
        count += other.count
    }

    static func bucket(for microseconds: Int64) -> Int {
        let value = Double(microseconds)
        return min(bucketCount - 1, max(0, Int((log2(value) * 4).rounded(.down))))
    }

    /// The upper bound of the bucket holding the given quantile (0...1), in microseconds.
    public func percentile(_ quantile: Double) -> Int64 {
        guard count > 0 else { return 0 }
        let rank = Int64((Double(count) * quantile).rounded(.up))
        var seen: Int64 = 0
        for (index, bucketCount) in buckets.enumerated() {
            seen += bucketCount
            if seen >= max(1, rank) { return Int64(pow(2.0, Double(index + 1) / 4).rounded(.up)) }
        }
        return Int64(pow(2.0, Double(Self.bucketCount) / 4))
    }
}

/// Per-method request counts, errors by reason and latency. Thread-safe.
public final class Metrics: @unchecked Sendable {
    private struct MethodFigures {
        var count: Int64 = 0
        var errors: [String: Int64] = [:]
        var latency = LatencyHistogram()

        mutating func record(microseconds: Int64, errorReason: String?) {
            count += 1
            if let errorReason { errors[errorReason, default: 0] += 1 }
            latency.record(microseconds: microseconds)
        }

        mutating func merge(_ other: MethodFigures) {
            count += other.count
            errors.merge(other.errors, uniquingKeysWith: +)
            latency.merge(other.latency)
        }
    }

    /// A method's place in every loop's part, resolved once (when its route is built) so that
    /// recording a request hashes no name.
    public struct Slot: Sendable, Equatable {
        fileprivate let index: Int
    }

    private let lock = Lock()
    /// Recorded on every request, from every loop at once: one part per loop (see `PerLoop`),
    /// each holding its figures by slot.
    private let methods = PerLoop([MethodFigures]())
    /// Slot index <-> method name.
    private let slotNames = NamedSlots()
    private var counters: [String: Int64] = [:]
    private let startedMilliseconds = MonotonicClock.nowMilliseconds()

    public init() {}

    /// The slot `method` is recorded in: the same for every call with the same name.
    public func slot(for method: String) -> Slot {
        Slot(index: slotNames.number(for: method))
    }

    public func record(_ slot: Slot, microseconds: Int64, errorReason: String?) {
        methods.update { figures in
            figures.extend(toInclude: slot.index, with: MethodFigures())
            // In place: a copy taken out and stored back would copy the histogram's buckets per request.
            figures[slot.index].record(microseconds: microseconds, errorReason: errorReason)
        }
    }

    /// A named event counter (`reset.refused`, `delivery.failed`, ...).
    public func increment(_ counter: String, by amount: Int64 = 1) {
        lock.lock()
        counters[counter, default: 0] += amount
        lock.unlock()
    }

    public func counter(_ name: String) -> Int64 {
        lock.lock()
        defer { lock.unlock() }
        return counters[name] ?? 0
    }

    public var uptimeSeconds: Int64 { (MonotonicClock.nowMilliseconds() - startedMilliseconds) / 1000 }

    /// `{"uptime_s", "methods": {name: {count, errors: {reason: n}, p50_us, p99_us}}, "counters"}`.
    public func snapshot() -> JSON {
        let names = slotNames.allNames
        var merged: [String: MethodFigures] = [:]
        methods.visitAll { part in
            // A slot taken since the names were read is left for the next snapshot.
            for (index, figures) in zip(part.indices, part) where index < names.count && figures.count > 0 {
                merged[names[index], default: MethodFigures()].merge(figures)
            }
        }
        lock.lock()
        defer { lock.unlock() }
        var methodTable: [String: JSON] = [:]
        for (name, figures) in merged {
            methodTable[name] = .object([
                "count": .int(figures.count),
                "errors": .object(figures.errors.mapValues { .int($0) }),
                "p50_us": .int(figures.latency.percentile(0.50)),
                "p99_us": .int(figures.latency.percentile(0.99)),
            ])
        }
        return .object([
            "uptime_s": .int(uptimeSeconds),
            "methods": .object(methodTable),
            "counters": .object(counters.mapValues { .int($0) }),
        ])
    }
}
