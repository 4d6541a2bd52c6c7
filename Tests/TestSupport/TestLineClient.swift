import LineProtocol
import Platform

/// A blocking line-protocol client over a plain socket, with a receive timeout, that can also
/// send raw bytes and watch for the server closing.
public final class TestLineClient: @unchecked Sendable {
    public let fd: Int32
    private var buffer: [UInt8] = []
    private var nextID: Int64 = 0

    public init(port: Int, receiveBufferBytes: Int32? = nil, timeoutMilliseconds: Int = 5000) throws {
        fd = try LoopbackSocket.connect(port: port, timeoutMilliseconds: timeoutMilliseconds, receiveBufferBytes: receiveBufferBytes)
    }

    deinit { Glibc.close(fd) }

    public func send(raw text: String) -> Bool { LoopbackSocket.sendAll(fd, Array(text.utf8)) }

    /// The next line, or nil on close / timeout.
    public func readLine() -> String? {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let count = chunk.withUnsafeMutableBytes { Glibc.recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { return nil }
            buffer.append(contentsOf: chunk[0..<count])
        }
    }

    /// True when the server closed the connection (read gives 0 or reset) within the receive timeout.
    public func waitForClose() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.recv(fd, $0.baseAddress, $0.count, 0) }
            if count == 0 { return true }
            if count < 0 { return errno == ECONNRESET }
        }
    }

    /// Sends one request and waits for its answer.
    public func call(_ method: String, _ params: JSON? = nil, meta: RequestMeta? = nil) throws -> RPCResponse {
        nextID += 1
        var line = RPCRequest(method: method, params: params, id: .int(nextID), meta: meta).encoded()
        line.append(UInt8(ascii: "\n"))
        guard LoopbackSocket.sendAll(fd, line) else { throw TestFailure("send failed") }
        guard let answer = readLine() else { throw TestFailure("no answer to \(method)") }
        let json = try JSONParser.parse(Array(answer.utf8), limits: .default)
        guard let response = RPCResponse.decode(json) else { throw TestFailure("not a response: \(answer)") }
        return response
    }
}

extension RPCResponse {
    public var result: JSON? { if case .success(let value) = outcome { value } else { nil } }
    public var error: RPCError? { if case .failure(let value) = outcome { value } else { nil } }
    public var reason: String? { error?.reasonText }
}
