#if canImport(Darwin)
import Darwin
#else
import Glibc
#endif

/// A TCP connection in blocking mode, for worker threads: the connect is bounded by a deadline
/// (started non-blocking, then polled, the same on Linux and Darwin), then every read and write
/// by the socket's receive and send timeouts. The one plain transport of the provider HTTP
/// client and the SMTP client; TLS goes over its `fd`.
public final class BlockingSocket: BlockingStream {
    public let fd: Int32
    private var closed = false

    private init(fd: Int32) { self.fd = fd }
    deinit { close() }

    /// Resolves `host` and tries its addresses in turn, each for up to `connectTimeoutMilliseconds`.
    public static func connect(
        host: String, port: Int, connectTimeoutMilliseconds: Int, ioTimeoutMilliseconds: Int
    ) throws(BlockingStreamError) -> BlockingSocket {
        precondition(connectTimeoutMilliseconds > 0 && ioTimeoutMilliseconds > 0, "a blocking socket needs its deadlines")
        let addresses: [SocketAddress]
        do { addresses = try SocketAddress.resolve(host: host, port: port) } catch { throw BlockingStreamError(.unresolved, "cannot resolve \(host)") }
        var lastFailure = "no address"
        for address in addresses {
            do throws(SystemError) {
                let socket = try connect(to: address, timeoutMilliseconds: connectTimeoutMilliseconds)
                try socket.makeBlocking(ioTimeoutMilliseconds: ioTimeoutMilliseconds)
                return socket
            } catch {
                lastFailure = error.errno == ETIMEDOUT ? "connect timed out" : String(cString: strerror(error.errno))
            }
        }
        throw BlockingStreamError(.unreachable, "cannot connect to \(Endpoint(host: host, port: port)): \(lastFailure)")
    }

    private static func connect(to address: SocketAddress, timeoutMilliseconds: Int) throws(SystemError) -> BlockingSocket {
        let socket = BlockingSocket(fd: try Socket.connect(to: address).fd)
        let deadline = MonotonicClock.nowMilliseconds() + Int64(timeoutMilliseconds)
        var poller = pollfd(fd: socket.fd, events: Int16(POLLOUT), revents: 0)
        while true {
            let remaining = max(0, deadline - MonotonicClock.nowMilliseconds())
            let ready = LibC.poll(&poller, 1, Int32(clamping: remaining))
            if ready > 0 { break }
            if ready == 0 { throw SystemError(call: "connect(\(address))", errno: ETIMEDOUT) }
            if errno != EINTR { throw SystemError(call: "poll", errno: errno) }
        }
        let pending = Socket(fd: socket.fd).pendingError()
        guard pending == 0 else { throw SystemError(call: "connect(\(address))", errno: pending) }
        return socket
    }

    /// Blocking from here on, with a deadline on every read and write.
    private func makeBlocking(ioTimeoutMilliseconds: Int) throws(SystemError) {
        let flags = try systemCallOrThrow("fcntl") { fcntl(fd, F_GETFL) }
        try systemCallOrThrow("fcntl") { fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) }
        var timeout = timeval(tv_sec: .init(ioTimeoutMilliseconds / 1000), tv_usec: .init((ioTimeoutMilliseconds % 1000) * 1000))
        for option in [SO_RCVTIMEO, SO_SNDTIMEO] {
            try systemCallOrThrow("setsockopt") { setsockopt(fd, SOL_SOCKET, option, &timeout, socklen_t(MemoryLayout<timeval>.size)) }
        }
    }

    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(BlockingStreamError) -> Int {
        precondition(!closed, "read after close")
        let result: IOResult<Int>
        do { result = try Socket(fd: fd).read(into: buffer) } catch {
            throw BlockingStreamError(.failed, "read failed: \(String(cString: strerror(error.errno)))")
        }
        switch result {
        case .done(let count): return count
        case .wouldBlock: throw BlockingStreamError(.timedOut, "read timed out")
        }
    }

    public func write(_ bytes: UnsafeRawBufferPointer) throws(BlockingStreamError) {
        precondition(!closed, "write after close")
        var offset = 0
        while offset < bytes.count {
            let result: IOResult<Int>
            do { result = try Socket(fd: fd).write(UnsafeRawBufferPointer(rebasing: bytes[offset...])) } catch {
                throw BlockingStreamError(.failed, "write failed: \(String(cString: strerror(error.errno)))")
            }
            switch result {
            case .done(let count): offset += count
            case .wouldBlock: throw BlockingStreamError(.timedOut, "write timed out")
            }
        }
    }

    public func close() {
        guard !closed else { return }
        closed = true
        LibC.close(fd)
    }
}
