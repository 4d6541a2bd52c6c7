import CLinux
import Glibc

/// A non-blocking TCP socket file descriptor. The only type that reads, writes, binds,
/// accepts and connects; everything above it deals in bytes and events.
public struct Socket: Sendable, Hashable {
    public let fd: Int32

    init(fd: Int32) {
        precondition(fd >= 0, "socket fd must be valid")
        self.fd = fd
    }

    private static let streamFlags = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)

    /// Binds and listens. Port 0 picks an ephemeral port; read it back with `localAddress`.
    public static func listen(on address: SocketAddress, backlog: Int32 = 1024) throws(SystemError) -> Socket {
        let fd = try systemCallOrThrow("socket") { Glibc.socket(address.family, streamFlags, 0) }
        let socket = Socket(fd: fd)
        do {
            try socket.setOption(SOL_SOCKET, SO_REUSEADDR, 1)
            var storage = address.storage
            _ = try withUnsafePointer(to: &storage) { pointer throws(SystemError) in
                try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw throws(SystemError) in
                    try systemCallOrThrow("bind(\(address))") { Glibc.bind(fd, raw, address.length) }
                }
            }
            try systemCallOrThrow("listen") { Glibc.listen(fd, backlog) }
        } catch {
            socket.close()
            throw error
        }
        return socket
    }

    /// Starts a non-blocking connect; completion is signalled by writability, then `pendingError()`.
    public static func connect(to address: SocketAddress) throws(SystemError) -> Socket {
        let fd = try systemCallOrThrow("socket") { Glibc.socket(address.family, streamFlags, 0) }
        let socket = Socket(fd: fd)
        var storage = address.storage
        do {
            _ = try withUnsafePointer(to: &storage) { pointer throws(SystemError) in
                try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw throws(SystemError) in
                    try systemCall("connect(\(address))") { Glibc.connect(fd, raw, address.length) }
                }
            }
            try socket.setOption(Int32(IPPROTO_TCP), TCP_NODELAY, 1)
        } catch {
            socket.close()
            throw error
        }
        return socket
    }

    /// Accepts one pending connection, or `.wouldBlock` when the queue is empty.
    func accept() throws(SystemError) -> IOResult<(Socket, SocketAddress)> {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = try withUnsafeMutablePointer(to: &storage) { pointer throws(SystemError) in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw throws(SystemError) in
                try systemCall("accept4") { lk_accept(fd, raw, &length) }
            }
        }
        switch result {
        case .wouldBlock: return .wouldBlock
        case .done(let newFD):
            let socket = Socket(fd: newFD)
            try? socket.setOption(Int32(IPPROTO_TCP), TCP_NODELAY, 1)
            return .done((socket, SocketAddress(storage: storage, length: length)))
        }
    }

    /// Reads into `buffer`; `.done(0)` means the peer closed its side.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> IOResult<Int> {
        try systemCall("read") { Glibc.read(fd, buffer.baseAddress, buffer.count) }
    }

    /// Writes what the kernel takes now; never raises SIGPIPE.
    func write(_ bytes: UnsafeRawBufferPointer) throws(SystemError) -> IOResult<Int> {
        try systemCall("send") { Glibc.send(fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL)) }
    }

    func setOption(_ level: Int32, _ name: Int32, _ value: Int32) throws(SystemError) {
        var value = value
        try systemCallOrThrow("setsockopt") { setsockopt(fd, level, name, &value, socklen_t(MemoryLayout<Int32>.size)) }
    }

    /// The outcome of a non-blocking connect: 0 when connected, an errno otherwise.
    func pendingError() -> Int32 {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_ERROR, &value, &length) == 0 else { return Glibc.errno }
        return value
    }

    public var localAddress: SocketAddress? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let status = withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return status == 0 ? SocketAddress(storage: storage, length: length) : nil
    }

    /// Stops further reads and writes but keeps the fd, so queued data can still be flushed.
    func shutdownWrite() { _ = Glibc.shutdown(fd, Int32(SHUT_WR)) }

    public func close() { _ = Glibc.close(fd) }
}

/// Ignore SIGPIPE and SIGXFSZ process-wide: a peer that hangs up must produce EPIPE, and a
/// write past a file-size limit EFBIG (a storage error the client hears about), not a dead process.
public func ignoreBrokenPipeSignals() {
    signal(SIGPIPE, SIG_IGN)
    signal(SIGXFSZ, SIG_IGN)
}
