import Foundation
import LineProtocol
import Platform

/// A stand-in service on a real socket that answers each request with the line its caller
/// scripted: `params.answer`, with `$ID` replaced by the request's id as the gateway sent it
/// (`<service>.health` answers a healthy replica). So a test can make a "service" answer any
/// bytes at all, junk included, and see what the real gateway passes on. One thread per
/// connection, answers in the order requests arrive. Stopped in `stop`.
final class ScriptedService: @unchecked Sendable {
    let port: Int
    private let listener: Int32
    private let lock = NSLock()
    private var connections: [Int32] = []
    private var stopped = false

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw GatewayTestError("socket failed: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ready = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && listen(fd, 64) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard ready else {
            Glibc.close(fd)
            throw GatewayTestError("bind/listen failed: errno \(errno)")
        }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        let acceptor = Thread { [self] in acceptLoop() }
        acceptor.start()
    }

    var address: String { "127.0.0.1:\(port)" }

    func stop() {
        lock.lock()
        stopped = true
        let open = connections
        lock.unlock()
        Glibc.shutdown(listener, Int32(SHUT_RDWR))
        Glibc.close(listener)
        for fd in open { Glibc.shutdown(fd, Int32(SHUT_RDWR)) }
    }

    private func acceptLoop() {
        while true {
            let fd = accept(listener, nil, nil)
            guard fd >= 0 else { return }
            lock.lock()
            if stopped {
                lock.unlock()
                Glibc.close(fd)
                return
            }
            connections.append(fd)
            lock.unlock()
            let thread = Thread { [self] in serve(fd) }
            thread.start()
        }
    }

    private func serve(_ fd: Int32) {
        defer { Glibc.close(fd) }
        var pending: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { return }
            pending.append(contentsOf: chunk[0..<count])
            var answers: [UInt8] = []
            while let newline = pending.firstIndex(of: 0x0A) {
                let line = Array(pending[..<newline])
                pending.removeSubrange(...newline)
                answers += Self.answer(to: line) + [0x0A]
            }
            var offset = 0
            while offset < answers.count {
                let written = answers[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                guard written > 0 else { return }
                offset += written
            }
        }
    }

    private static func answer(to line: [UInt8]) -> [UInt8] {
        guard let request = try? JSONParser.parse(line), let id = request["id"], let method = request["method"]?.stringValue else {
            return Array(#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}"#.utf8)
        }
        let idText = id.text
        if method.hasSuffix(".health") {
            return Array(#"{"jsonrpc":"2.0","id":\#(idText),"result":{"replica_id":"scripted","status":"ok"}}"#.utf8)
        }
        let script = request["params"]?["answer"]?.stringValue ?? #"{"jsonrpc":"2.0","id":$ID,"result":{"pong":true}}"#
        return Array(script.replacingOccurrences(of: "$ID", with: idText).utf8)
    }
}
