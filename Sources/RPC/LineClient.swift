import LineProtocol
import Platform
import TLS

/// A blocking line-protocol client: one request, one answer. For `latchkey call`, tests
/// and tools; services use the non-blocking `RPCClient`.
public final class LineClient {
    public let endpoint: Endpoint
    private let fd: Int32
    /// The socket, for a caller that waits on several clients with `poll` before reading.
    public var descriptor: Int32 { fd }
    private var framer = LineFramer(maxLineBytes: 64 << 20)
    private var nextID: Int64 = 0
    /// The TLS session when the server's door speaks TLS (`tls`), nil on a plain connection.
    private var session: TLSConnection?

    /// `tls`: speak TLS, verifying the server as `tls` says, with the endpoint's host as the name.
    public init(_ endpoint: Endpoint, tls: TLSClientContext? = nil, timeoutMilliseconds: Int = 10_000) throws {
        self.endpoint = endpoint
        guard let address = try SocketAddress.resolve(host: endpoint.host, port: endpoint.port).first else {
            throw SystemError(call: "resolve(\(endpoint))", errno: ENOENT)
        }
        fd = try Socket.openStream(family: address.family, nonBlocking: false)
        var timeout = timeval(tv_sec: timeoutMilliseconds / 1000, tv_usec: (timeoutMilliseconds % 1000) * 1000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var noDelay: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, socklen_t(MemoryLayout<Int32>.size))
        let status = address.withSockaddr { raw, length in connect(fd, raw, length) }
        // Every stored property is set by now, so a throw runs deinit, which closes the socket.
        if status != 0 { throw SystemError(call: "connect(\(endpoint))", errno: errno) }
        if let tls {
            let session = try tls.connection(overSocket: fd, to: PeerName(endpoint.host))
            self.session = session
            try session.completeHandshake()
        }
    }

    deinit {
        session?.shutdown()
        LibC.close(fd)
    }

    /// Sends one request and waits for its answer.
    public func call(_ method: String, _ params: JSON? = nil) throws -> RPCResponse {
        nextID += 1
        try send(RPCRequest(method: method, params: params, id: .int(nextID)).encoded())
        guard let line = try readLine() else { throw SystemError(call: "read", errno: ECONNRESET) }
        let json = try JSONParser.parse(line, limits: JSONLimits(maxDepth: 64, maxBytes: 64 << 20, maxStringBytes: 64 << 20))
        guard let response = RPCResponse.decode(json) else { throw SystemError(call: "decode", errno: EPROTO) }
        return response
    }

    /// Calls and returns the result, or throws the error answer.
    public func result(_ method: String, _ params: JSON? = nil) throws -> JSON {
        try call(method, params).outcome.get()
    }

    /// Writes raw bytes followed by `\n`.
    public func send(_ line: [UInt8]) throws {
        try sendRaw(line + [UInt8(ascii: "\n")])
    }

    /// Writes raw bytes as they are (for hostile-input tests).
    public func sendRaw(_ bytes: [UInt8]) throws {
        if let session {
            // The closures return a Result rather than throwing: a typed throw through
            // `withUnsafeBytes` crashes the 6.3 compiler.
            try bytes.withUnsafeBytes { raw in Result { () throws(TLSError) in try session.writeAll(raw) } }.get()
            return
        }
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { LibC.send(fd, $0.baseAddress! + offset, bytes.count - offset, Socket.sendFlags) }
            if written < 0 {
                if errno == EINTR { continue }
                throw SystemError(call: "send", errno: errno)
            }
            offset += written
        }
    }

    /// The next answer line, or nil when the server closed the connection.
    public func readLine() throws -> [UInt8]? {
        while true {
            if let framed = framer.next(), case .line(let line) = framed { return line }
            let count = try readOnce()
            if count == 0 { return nil }
            framer.append(readBuffer[0..<count])
        }
    }

    /// Waits for input once, into `readBuffer`; answers how many bytes came (0: the server closed).
    private func readOnce() throws -> Int {
        if readBuffer.isEmpty { readBuffer = [UInt8](repeating: 0, count: 64 * 1024) }
        if let session {
            let outcome = readBuffer.withUnsafeMutableBytes { raw in Result { () throws(TLSError) in try session.readSome(into: raw) } }
            return try outcome.get()
        }
        var count = 0
        repeat {
            count = readBuffer.withUnsafeMutableBytes { LibC.read(fd, $0.baseAddress, $0.count) }
        } while count < 0 && errno == EINTR
        if count < 0 { throw SystemError(call: "read", errno: errno) }
        return count
    }

    /// Waits for input once and hands every complete line it holds to `body` (without copying
    /// each line: for the bench's load generator). Returns false when the server closed.
    public func readAvailableLines(_ body: (UnsafeBufferPointer<UInt8>) throws -> Void) throws -> Bool {
        var handed = false
        while let framed = framer.next() {
            if case .line(let line) = framed { try line.withUnsafeBufferPointer(body) }
            handed = true
        }
        if handed { return true }
        let count = try readOnce()
        if count == 0 { return false }
        // Lines are handed from where they lie: the read buffer, unless a line began in an earlier read.
        if pendingInput.isEmpty {
            let consumed = try readBuffer.withUnsafeBufferPointer { try Self.handLines(UnsafeBufferPointer(rebasing: $0[..<count]), from: 0, body) }
            pendingInput.append(contentsOf: readBuffer[consumed..<count])
        } else {
            let kept = pendingInput.count
            pendingInput.append(contentsOf: readBuffer[..<count])
            let consumed = try pendingInput.withUnsafeBufferPointer { try Self.handLines($0, from: kept, body) }
            pendingInput.removeFirst(consumed)
        }
        return true
    }

    /// Hands every complete line of `bytes` (whose `\n`s start at `from`) to `body`; returns the
    /// count of bytes handed, up to and including the last `\n`.
    private static func handLines(
        _ bytes: UnsafeBufferPointer<UInt8>, from start: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> Void
    ) rethrows -> Int {
        var lineStart = 0
        for index in start..<bytes.count where bytes[index] == 0x0A {
            try body(UnsafeBufferPointer(rebasing: bytes[lineStart..<index]))
            lineStart = index + 1
        }
        return lineStart
    }

    /// Where `readLine` and `readAvailableLines` read: allocated on the first read, then reused
    /// (a call used to allocate and zero 64 KiB for its answer: 5 % of a flow bench's client
    /// samples, on the cores the stack it measures uses). A stored
    /// property, not `lazy`: a lazy one is read and written back around every mutation, so each
    /// read copied all 64 KiB (a seventh of the bench load generator's CPU).
    private var readBuffer: [UInt8] = []

    /// Bytes after the last complete line, for `readAvailableLines`.
    private var pendingInput: [UInt8] = []

    /// Half-closes: tells the server no more requests will come.
    public func finishSending() {
        session?.shutdown()
        _ = LibC.shutdown(fd, Int32(SHUT_WR))
    }
}
