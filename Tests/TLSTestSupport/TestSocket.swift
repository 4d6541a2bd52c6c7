import Platform

/// A blocking TCP connection to a loopback test server, with send and receive timeouts, for
/// driving `TLSConnection` as the clients do. Call `close()` when done: it also keeps the socket
/// alive until then (Swift may end an object's life after its last use, and `fd` is only a number).
public final class TestSocket {
    public let fd: Int32
    private var closed = false

    public init(address: String = "127.0.0.1", port: Int, timeoutMilliseconds: Int = 5000) throws {
        let isV6 = address.contains(":")
        fd = socket(isV6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw CertificateError("socket: errno \(errno)") }
        var timeout = timeval(tv_sec: timeoutMilliseconds / 1000, tv_usec: (timeoutMilliseconds % 1000) * 1000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var (storage, length) = loopback(address, port: port)
        let connected = withUnsafePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, length) } }
        guard connected == 0 else {
            let failure = errno
            Glibc.close(fd)
            throw CertificateError("connect to \(address):\(port): errno \(failure)")
        }
    }

    public func close() {
        guard !closed else { return }
        closed = true
        Glibc.close(fd)
    }

    deinit { close() }
}

/// `address` (an IPv4 or IPv6 literal) and `port` as a socket address for bind or connect.
func loopback(_ address: String, port: Int) -> (sockaddr_storage, socklen_t) {
    var storage = sockaddr_storage()
    if address.contains(":") {
        withUnsafeMutableBytes(of: &storage) { raw in
            let v6 = raw.baseAddress!.assumingMemoryBound(to: sockaddr_in6.self)
            v6.pointee.sin6_family = sa_family_t(AF_INET6)
            v6.pointee.sin6_port = in_port_t(UInt16(port).bigEndian)
            _ = inet_pton(AF_INET6, address, &v6.pointee.sin6_addr)
        }
        return (storage, socklen_t(MemoryLayout<sockaddr_in6>.size))
    }
    withUnsafeMutableBytes(of: &storage) { raw in
        let v4 = raw.baseAddress!.assumingMemoryBound(to: sockaddr_in.self)
        v4.pointee.sin_family = sa_family_t(AF_INET)
        v4.pointee.sin_port = in_port_t(UInt16(port).bigEndian)
        _ = inet_pton(AF_INET, address, &v4.pointee.sin_addr)
    }
    return (storage, socklen_t(MemoryLayout<sockaddr_in>.size))
}
