#if os(Linux)
import CLinux
import Platform

/// Linux's epoll, level-triggered, through the CLinux shim (`struct epoll_event` is packed).
final class EpollBackend: EventBackend {
    private let epollFD: Int32
    private var tokens = [UInt64](repeating: 0, count: 256)
    private var masks = [UInt32](repeating: 0, count: 256)

    init() throws(SystemError) {
        epollFD = try systemCallOrThrow("epoll_create1") { lk_epoll_create() }
    }

    deinit { LibC.close(epollFD) }

    func add(_ fd: Int32, readable: Bool, writable: Bool, token: UInt64) throws(SystemError) {
        try systemCallOrThrow("epoll_ctl(add)") { lk_epoll_add(epollFD, fd, Self.mask(readable, writable), token) }
    }

    func modify(_ fd: Int32, readable: Bool, writable: Bool, token: UInt64) {
        _ = lk_epoll_modify(epollFD, fd, Self.mask(readable, writable), token)
    }

    func remove(_ fd: Int32) { _ = lk_epoll_remove(epollFD, fd) }

    func wait(timeoutMilliseconds: Int32, into events: inout [ReadyEvent]) -> Int {
        let count = Int(lk_epoll_wait(epollFD, &tokens, &masks, Int32(tokens.count), timeoutMilliseconds))
        guard count > 0 else { return count }
        for index in 0..<count {
            let mask = masks[index]
            events[index] = ReadyEvent(
                token: tokens[index], readable: mask & LK_EPOLL_IN != 0, writable: mask & LK_EPOLL_OUT != 0,
                hangup: mask & (LK_EPOLL_HUP | LK_EPOLL_ERR) != 0)
        }
        return count
    }

    private static func mask(_ readable: Bool, _ writable: Bool) -> UInt32 {
        // No EPOLLRDHUP: it is level-triggered and would spin once a peer half-closes;
        // end of input is seen as a zero-byte read instead.
        var mask: UInt32 = 0
        if readable { mask |= LK_EPOLL_IN }
        if writable { mask |= LK_EPOLL_OUT }
        return mask
    }
}
#endif
