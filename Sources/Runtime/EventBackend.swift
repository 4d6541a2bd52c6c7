import FoundationEssentials
import Platform

/// Interest in a descriptor, and what the operating system says is ready.
struct ReadyEvent {
    var token: UInt64
    var readable: Bool
    var writable: Bool
    var hangup: Bool
}

/// The one thing an event loop asks of the platform: watch descriptors, wait for readiness.
/// Each registration carries a token that comes back with its events, so the loop can drop an
/// event meant for a descriptor closed (and its number reused) earlier in the same turn.
protocol EventBackend: AnyObject {
    func add(_ fd: Int32, readable: Bool, writable: Bool, token: UInt64) throws(SystemError)
    func modify(_ fd: Int32, readable: Bool, writable: Bool, token: UInt64)
    func remove(_ fd: Int32)
    /// Waits up to `timeoutMilliseconds` and fills `events`; returns how many, or -1 with errno.
    func wait(timeoutMilliseconds: Int32, into events: inout [ReadyEvent]) -> Int
}

/// Which backend an event loop uses: `epoll` (Linux, the default) or the portable `poll(2)`,
/// chosen per process by `--event-backend` / `LATCHKEY_EVENT_BACKEND`.
public enum EventBackendKind: String, Sendable, CaseIterable {
    case epoll
    case poll

    /// The process-wide choice: set by `ServiceHost` from its configuration; tests and tools
    /// that build loops directly follow `LATCHKEY_EVENT_BACKEND` (so CI can run a suite on poll).
    nonisolated(unsafe) public static var processDefault: EventBackendKind =
        ProcessInfo.processInfo.environment["LATCHKEY_EVENT_BACKEND"].flatMap(EventBackendKind.init(rawValue:)) ?? .platformDefault

    #if os(Linux)
    public static let platformDefault = EventBackendKind.epoll
    #else
    public static let platformDefault = EventBackendKind.poll
    #endif

    func make() throws(SystemError) -> EventBackend {
        switch self {
        case .epoll:
            #if os(Linux)
            return try EpollBackend()
            #else
            throw SystemError(call: "epoll (Linux only)", errno: ENOSYS)
            #endif
        case .poll: return PollBackend()
        }
    }
}
