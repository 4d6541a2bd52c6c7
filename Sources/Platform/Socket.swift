#if canImport(Darwin)
import Darwin
#else
import CLinux
import Glibc
#endif

/// A non-blocking TCP socket file descriptor. The only type that reads, writes, binds,
/// accepts and connects; everything above it deals in bytes and events.
public struct Socket: Sendable, Hashable {
    public let fd: Int32

    public init(fd: Int32) {
        precondition(fd >= 0, "socket fd must be valid")
        self.fd = fd
    }

    /// A new stream socket descriptor, close-on-exec, non-blocking when asked: atomically on
    /// Linux (`SOCK_CLOEXEC`), by `fcntl` right after on Darwin, which also needs `SO_NOSIGPIPE`
    /// where Linux passes `MSG_NOSIGNAL` to each send.
    public static func openStream(family: Int32, nonBlocking: Bool) throws(SystemError) -> Int32 {
        #if canImport(Darwin)
        let fd = try systemCallOrThrow("socket") { Darwin.socket(family, SOCK_STREAM, 0) }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        if nonBlocking { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
        var on: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &on, socklen_t(MemoryLayout<Int32>.size))
        return fd
        #else
        var type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        if nonBlocking { type |= Int32(SOCK_NONBLOCK.rawValue) }
        return try systemCallOrThrow("socket") { Glibc.socket(family, type, 0) }
        #endif
    }

    /// Flags for every `send`: Linux is told per call not to raise SIGPIPE (Darwin per socket).
    #if canImport(Darwin)
    public static let sendFlags: Int32 = 0
    #else
    public static let sendFlags = Int32(MSG_NOSIGNAL)
    #endif

    /// Binds and listens. Port 0 picks an ephemeral port; read it back with `localAddress`.
    public static func listen(on address: SocketAddress, backlog: Int32 = 1024) throws(SystemError) -> Socket {
        let fd = try openStream(family: address.family, nonBlocking: true)
        let socket = Socket(fd: fd)
        do {
            try socket.setOption(SOL_SOCKET, SO_REUSEADDR, 1)
            _ = try address.withSockaddr { raw, length throws(SystemError) in
                try systemCallOrThrow("bind(\(address))") { bind(fd, raw, length) }
            }
            try systemCallOrThrow("listen") { libcListen(fd, backlog) }
        } catch {
            socket.close()
            throw error
        }
        return socket
    }

    /// Starts a non-blocking connect; completion is signalled by writability, then `pendingError()`.
    public static func connect(to address: SocketAddress) throws(SystemError) -> Socket {
        let fd = try openStream(family: address.family, nonBlocking: true)
        let socket = Socket(fd: fd)
        do {
            _ = try address.withSockaddr { raw, length throws(SystemError) in
                try systemCall("connect(\(address))") { libcConnect(fd, raw, length) }
            }
            try socket.setOption(Int32(IPPROTO_TCP), TCP_NODELAY, 1)
        } catch {
            socket.close()
            throw error
        }
        return socket
    }

    /// Accepts one pending connection, or `.wouldBlock` when the queue is empty.
    public func accept() throws(SystemError) -> IOResult<(Socket, SocketAddress)> {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = try withUnsafeMutablePointer(to: &storage) { pointer throws(SystemError) in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw throws(SystemError) in
                try systemCall("accept") { acceptCloseOnExecNonBlocking(fd, raw, &length) }
            }
        }
        switch result {
        case .wouldBlock: return .wouldBlock
        case .done(let newFD):
            let socket = Socket(fd: newFD)
            try? socket.setOption(Int32(IPPROTO_TCP), TCP_NODELAY, 1)
            return .done((socket, SocketAddress(copying: &storage, length: length)))
        }
    }

    /// Reads into `buffer`; `.done(0)` means the peer closed its side.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> IOResult<Int> {
        try systemCall("read") { libcRead(fd, buffer.baseAddress, buffer.count) }
    }

    /// Writes what the kernel takes now; never raises SIGPIPE.
    public func write(_ bytes: UnsafeRawBufferPointer) throws(SystemError) -> IOResult<Int> {
        try systemCall("send") { send(fd, bytes.baseAddress, bytes.count, Socket.sendFlags) }
    }

    public func setOption(_ level: Int32, _ name: Int32, _ value: Int32) throws(SystemError) {
        var value = value
        try systemCallOrThrow("setsockopt") { setsockopt(fd, level, name, &value, socklen_t(MemoryLayout<Int32>.size)) }
    }

    /// The outcome of a non-blocking connect: 0 when connected, an errno otherwise.
    public func pendingError() -> Int32 {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_ERROR, &value, &length) == 0 else { return errno }
        return value
    }

    public var localAddress: SocketAddress? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let status = withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return status == 0 ? SocketAddress(copying: &storage, length: length) : nil
    }

    /// Stops further reads and writes but keeps the fd, so queued data can still be flushed.
    public func shutdownWrite() { _ = shutdown(fd, Int32(SHUT_WR)) }

    public func close() { LibC.close(fd) }
}

// The C library's calls whose names `Socket`'s own methods shadow, and `accept4` where it exists.
private func libcListen(_ fd: Int32, _ backlog: Int32) -> Int32 { listen(fd, backlog) }
private func libcConnect(_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 { connect(fd, address, length) }
private func libcRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int { read(fd, buffer, count) }

private func acceptCloseOnExecNonBlocking(_ fd: Int32, _ address: UnsafeMutablePointer<sockaddr>, _ length: UnsafeMutablePointer<socklen_t>) -> Int32 {
    #if canImport(Darwin)
    let accepted = accept(fd, address, length)
    guard accepted >= 0 else { return accepted }
    _ = fcntl(accepted, F_SETFD, FD_CLOEXEC)
    _ = fcntl(accepted, F_SETFL, fcntl(accepted, F_GETFL) | O_NONBLOCK)
    var on: Int32 = 1
    setsockopt(accepted, SOL_SOCKET, SO_NOSIGPIPE, &on, socklen_t(MemoryLayout<Int32>.size))
    return accepted
    #else
    return lk_accept(fd, address, length)
    #endif
}

/// Ignore SIGPIPE and SIGXFSZ process-wide: a peer that hangs up must produce EPIPE, and a
/// write past a file-size limit EFBIG (a storage error the client hears about), not a dead process.
public func ignoreBrokenPipeSignals() {
    signal(SIGPIPE, SIG_IGN)
    signal(SIGXFSZ, SIG_IGN)
}
