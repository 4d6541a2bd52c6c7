import Platform

/// The portable backend: `poll(2)` over the registered descriptors, as on any POSIX system.
/// O(n) per wait where epoll is O(ready), so epoll stays the default on Linux; this one keeps
/// the loop honest about what it needs from the platform (a macOS port starts here).
final class PollBackend: EventBackend {
    private var descriptors: [pollfd] = []
    private var tokens: [UInt64] = []
    /// Where each fd sits in `descriptors`, for O(1) modify and remove.
    private var positions: [Int32: Int] = [:]

    func add(_ fd: Int32, readable: Bool, writable: Bool, token: UInt64) throws(SystemError) {
        precondition(positions[fd] == nil, "fd \(fd) added twice")
        positions[fd] = descriptors.count
        descriptors.append(pollfd(fd: fd, events: Self.events(readable, writable), revents: 0))
        tokens.append(token)
    }

    func modify(_ fd: Int32, readable: Bool, writable: Bool, token: UInt64) {
        guard let position = positions[fd] else { return }
        descriptors[position].events = Self.events(readable, writable)
        tokens[position] = token
    }

    func remove(_ fd: Int32) {
        guard let position = positions.removeValue(forKey: fd) else { return }
        let last = descriptors.count - 1
        if position != last {
            descriptors[position] = descriptors[last]
            tokens[position] = tokens[last]
            positions[descriptors[position].fd] = position
        }
        descriptors.removeLast()
        tokens.removeLast()
    }

    func wait(timeoutMilliseconds: Int32, into events: inout [ReadyEvent]) -> Int {
        let result = LibC.poll(&descriptors, nfds_t(descriptors.count), timeoutMilliseconds)
        guard result > 0 else { return Int(result) }
        var count = 0
        for index in descriptors.indices where descriptors[index].revents != 0 && count < events.count {
            let revents = Int32(descriptors[index].revents)
            events[count] = ReadyEvent(
                token: tokens[index], readable: revents & Int32(POLLIN) != 0, writable: revents & Int32(POLLOUT) != 0,
                hangup: revents & Int32(POLLHUP | POLLERR | POLLNVAL) != 0)
            count += 1
        }
        return count
    }

    private static func events(_ readable: Bool, _ writable: Bool) -> Int16 {
        var events: Int16 = 0
        if readable { events |= Int16(POLLIN) }
        if writable { events |= Int16(POLLOUT) }
        return events
    }
}
