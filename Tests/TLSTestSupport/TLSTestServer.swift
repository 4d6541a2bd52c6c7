import Foundation
import Platform
import TLS

/// A blocking test server on a loopback address (port 0): one thread per connection, each
/// handed to `handler`, plain until the handler calls `startTLS()` (at once for HTTPS and
/// smtps, after `STARTTLS` for SMTP). Records what each handshake saw. `stop()` joins every thread.
public final class TLSTestServer: @unchecked Sendable {
    public let port: Int
    /// The listening socket's descriptor number; closed once, by the first `stop()`.
    public let listeningDescriptor: Int32
    private var isStopped = false
    private let context: TLSServerContext
    private let handler: @Sendable (TestConnection) -> Void
    private let lock = NSLock()
    private var _handshakes: [Handshake] = []
    private let threads = DispatchGroup()

    /// One server-side handshake: the SNI the client sent, or the error that ended it.
    public struct Handshake: Sendable {
        public let serverName: String?
        public let failure: TLSError?
    }

    public init(context: TLSServerContext, address: String = "127.0.0.1", handler: @escaping @Sendable (TestConnection) -> Void) throws {
        self.context = context
        self.handler = handler
        signal(SIGPIPE, SIG_IGN)  // OpenSSL writes with write(2); a client that hung up must not end the test run.
        (listeningDescriptor, port) = try Self.listen(on: address)
        threads.enter()
        Thread { [self] in
            acceptLoop()
            threads.leave()
        }.start()
    }

    public var handshakes: [Handshake] { lock.withLock { _handshakes } }

    /// Stops accepting and waits for the accept loop and every connection's thread to end.
    public func stop() {
        guard lock.withLock({ () -> Bool in
            defer { isStopped = true }
            return !isStopped
        }) else { return }
        Glibc.shutdown(listeningDescriptor, Int32(SHUT_RDWR))
        threads.wait()
        Glibc.close(listeningDescriptor)
    }

    func record(_ handshake: Handshake) { lock.withLock { _handshakes.append(handshake) } }

    private func acceptLoop() {
        while true {
            let fd = accept(listeningDescriptor, nil, nil)
            if fd < 0 {
                if errno == EINTR { continue }
                return  // shut down
            }
            var timeout = timeval(tv_sec: 5, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            let connection = TestConnection(fd: fd, server: self, context: context)
            threads.enter()
            Thread { [self] in
                handler(connection)
                connection.close()
                threads.leave()
            }.start()
        }
    }

    private static func listen(on address: String) throws -> (Int32, Int) {
        let isV6 = address.contains(":")
        let fd = socket(isV6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw CertificateError("socket: errno \(errno)") }
        var (storage, length) = loopback(address, port: 0)
        let bound = withUnsafeMutablePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        guard bound == 0, Glibc.listen(fd, 16) == 0 else {
            let failure = errno
            Glibc.close(fd)
            throw CertificateError("cannot listen on \(address): errno \(failure)")
        }
        _ = withUnsafeMutablePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        let port = withUnsafeBytes(of: &storage) { raw in
            isV6 ? raw.load(as: sockaddr_in6.self).sin6_port : raw.load(as: sockaddr_in.self).sin_port
        }
        return (fd, Int(UInt16(bigEndian: port)))
    }
}

/// One accepted connection, read and written line by line (5 s timeouts), plain or TLS.
public final class TestConnection: @unchecked Sendable {
    public let fd: Int32
    private unowned let server: TLSTestServer
    private let context: TLSServerContext
    private var tls: TLSConnection?
    private var buffer: [UInt8] = []

    init(fd: Int32, server: TLSTestServer, context: TLSServerContext) {
        self.fd = fd
        self.server = server
        self.context = context
    }

    public var isTLS: Bool { tls != nil }

    /// The server side of the handshake; false (and recorded) when it fails.
    public func startTLS() -> Bool {
        do {
            let session = try context.connection(overSocket: fd)
            try session.completeHandshake()
            tls = session
            server.record(.init(serverName: session.requestedServerName, failure: nil))
            return true
        } catch {
            server.record(.init(serverName: nil, failure: error))
            return false
        }
    }

    public func write(_ text: String) {
        let bytes = Array(text.utf8)
        bytes.withUnsafeBytes { raw in
            if let tls {
                try? tls.writeAll(raw)
            } else {
                _ = send(fd, raw.baseAddress, raw.count, Int32(MSG_NOSIGNAL))
            }
        }
    }

    /// The next line without its CRLF; nil at the end of the stream or on a timeout.
    public func readLine() -> String? {
        while true {
            if let newline = buffer.firstIndex(of: 0x0A) {
                var line = Array(buffer[..<newline])
                buffer.removeSubrange(...newline)
                if line.last == 0x0D { line.removeLast() }
                return String(decoding: line, as: UTF8.self)
            }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = chunk.withUnsafeMutableBytes { raw -> Int in
                if let tls { return (try? tls.readSome(into: raw)) ?? 0 }
                return max(recv(fd, raw.baseAddress, raw.count, 0), 0)
            }
            guard count > 0 else { return nil }
            buffer += chunk[..<count]
        }
    }

    /// Closes the socket without close_notify (a truncation, as far as the client can tell).
    public func dropWithoutCloseNotify() {
        tls = nil
        Glibc.shutdown(fd, Int32(SHUT_RDWR))
    }

    func close() {
        tls?.shutdown()
        Glibc.close(fd)
    }
}
