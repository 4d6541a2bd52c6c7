import FoundationEssentials
#if canImport(Darwin)
import Darwin
#else
import Glibc
#endif

/// The process's file descriptors (`RLIMIT_NOFILE`), shared by every listener's connections.
/// At listen, each listener declares its connection limit: the soft limit is raised to cover
/// them all plus a reserve, up to the hard limit. Accepted connections then hold a place, and
/// no more are taken than the soft limit leaves after the reserve, so the process keeps
/// descriptors for its own files and outbound connections. Thread-safe; one per process.
public final class DescriptorBudget: @unchecked Sendable {
    public static let shared = DescriptorBudget()

    /// What `declare` found when the configured limits do not fit: said once in a warning line.
    public struct Shortfall {
        public let configuredConnections: Int
        public let allowedConnections: Int
        public let softLimit: Int
        public let hardLimit: Int
    }

    private let lock = Lock()
    private var declaredConnections = 0
    private var openConnections = 0
    private var softLimit = Int.max
    private var warned = false

    /// Descriptors kept back from connections: stdio, the loop's own, database files, connections
    /// to other services, the spare for refusing. A quarter of a small limit, 64 of a large one.
    public static func reservedDescriptors(softLimit: Int) -> Int { min(64, softLimit / 4) }

    /// Adds a listener's limit; raises the soft limit to fit if the hard limit allows. Returns the
    /// shortfall the first time the limits do not fit (later ones are the same news).
    public func declare(maxConnections: Int) -> Shortfall? {
        lock.lock()
        defer { lock.unlock() }
        declaredConnections += maxConnections
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return nil }
        let hard = limit.rlim_max >= rlim_t(Int.max) ? Int.max : Int(limit.rlim_max)
        var soft = limit.rlim_cur >= rlim_t(Int.max) ? Int.max : Int(limit.rlim_cur)
        let (needed, overflow) = declaredConnections.addingReportingOverflow(64)
        if soft < needed || overflow {
            let wanted = min(hard, overflow ? Int.max : needed)
            limit.rlim_cur = rlim_t(wanted)
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 { soft = wanted }
        }
        softLimit = soft
        let allowed = allowedConnectionsLocked
        guard allowed < declaredConnections, !warned else { return nil }
        warned = true
        return Shortfall(configuredConnections: declaredConnections, allowedConnections: allowed, softLimit: soft, hardLimit: hard)
    }

    /// A listener that stopped gives its declared connections back.
    public func withdraw(maxConnections: Int) {
        lock.lock()
        declaredConnections -= maxConnections
        lock.unlock()
    }

    /// Takes a place for one accepted connection; false when the process has none left.
    public func acquire() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard openConnections < allowedConnectionsLocked else { return false }
        openConnections += 1
        return true
    }

    public func release() {
        lock.lock()
        openConnections -= 1
        precondition(openConnections >= 0, "a connection place released twice")
        lock.unlock()
    }

    private var allowedConnectionsLocked: Int {
        softLimit == Int.max ? Int.max : max(1, softLimit - Self.reservedDescriptors(softLimit: softLimit))
    }
}
