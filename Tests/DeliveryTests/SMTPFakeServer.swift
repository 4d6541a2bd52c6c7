import Foundation
import Platform
import Secrets
import TestSupport

/// A tiny scripted SMTP server on 127.0.0.1 (plain TCP, one thread per connection) that records
/// what a client sends. Real-server behaviour (TLS, MIME parsing) is checked by the interop suite.
final class SMTPFakeServer: @unchecked Sendable {
    struct Behaviour {
        /// Answer `451` to MAIL FROM on this many connections before accepting.
        var temporaryFailures = 0
        /// Answer `550` to RCPT TO.
        var rejectRecipient = false
        /// Advertise these AUTH mechanisms (none: no AUTH line).
        var authMechanisms: [String] = []
        /// Never greet (the client must time out).
        var silent = false
        /// Answer EHLO with `502` (the client must fall back to HELO).
        var noEHLO = false
    }

    let port: Int
    private let listenFD: Int32
    private let lock = NSLock()
    private var behaviour: Behaviour
    private var _connections = 0
    private var _commands: [String] = []
    private var _messages: [[UInt8]] = []
    private var _credentials: [String] = []
    private var stopping = false
    private let acceptLoopEnded = DispatchSemaphore(value: 0)

    init(_ behaviour: Behaviour = Behaviour()) throws {
        self.behaviour = behaviour
        (listenFD, port) = try LoopbackSocket.listen(backlog: 16)
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    /// Wakes the accept thread and waits for it to end before closing the socket, so the fd
    /// number cannot be reused by the next test's server while the old thread still accepts on it.
    func stop() {
        locked { stopping = true }
        shutdown(listenFD, Int32(SHUT_RDWR))
        acceptLoopEnded.wait()
        close(listenFD)
    }

    var connections: Int { locked { _connections } }
    var commands: [String] { locked { _commands } }
    var messages: [[UInt8]] { locked { _messages } }
    var credentials: [String] { locked { _credentials } }

    private func locked<T>(_ body: () -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body()
    }

    private func acceptLoop() {
        defer { acceptLoopEnded.signal() }
        while true {
            let fd = accept(listenFD, nil, nil)
            if locked({ stopping }) {
                if fd >= 0 { close(fd) }
                return
            }
            if fd < 0 {
                if errno == EINTR { continue }
                return
            }
            let index: Int = locked {
                _connections += 1
                return _connections
            }
            let thread = Thread { [self] in serve(fd, connection: index) }
            thread.start()
        }
    }

    private func serve(_ fd: Int32, connection: Int) {
        defer { close(fd) }
        let behaviour = locked { self.behaviour }
        if behaviour.silent {
            usleep(2_000_000)
            return
        }
        var reader = SMTPLineReader(fd: fd)
        func say(_ text: String) { _ = text.withCString { send(fd, $0, strlen($0), Int32(MSG_NOSIGNAL)) } }
        say("220 fake.example ESMTP ready\r\n")
        var authStep = 0
        var loginUser = ""
        while let line = reader.next() {
            locked { _commands.append(line.hasPrefix("AUTH PLAIN ") ? "AUTH PLAIN ***" : line) }
            if authStep == 1 {
                loginUser = String(decoding: Base64URL.decode(line) ?? [], as: UTF8.self)
                authStep = 2
                say("334 UGFzc3dvcmQ6\r\n")
                continue
            }
            if authStep == 2 {
                let password = String(decoding: Base64URL.decode(line) ?? [], as: UTF8.self)
                locked { _credentials.append("LOGIN \(loginUser) \(password)") }
                authStep = 0
                say("235 2.7.0 Authentication successful\r\n")
                continue
            }
            let upper = line.uppercased()
            if upper.hasPrefix("EHLO") {
                if behaviour.noEHLO {
                    say("502 5.5.2 command not implemented\r\n")
                    continue
                }
                var lines = ["250-fake.example greets you", "250-PIPELINING"]
                if !behaviour.authMechanisms.isEmpty { lines.append("250-AUTH " + behaviour.authMechanisms.joined(separator: " ")) }
                lines.append("250 8BITMIME")
                say(lines.joined(separator: "\r\n") + "\r\n")
            } else if upper.hasPrefix("HELO") {
                say("250 fake.example\r\n")
            } else if upper.hasPrefix("AUTH PLAIN ") {
                let decoded = Base64URL.decode(String(line.dropFirst(11))) ?? []
                let parts = decoded.split(separator: 0, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
                locked { _credentials.append("PLAIN \(parts.dropFirst().joined(separator: " "))") }
                say("235 2.7.0 Authentication successful\r\n")
            } else if upper == "AUTH LOGIN" {
                authStep = 1
                say("334 VXNlcm5hbWU6\r\n")
            } else if upper.hasPrefix("MAIL FROM:") {
                if connection <= behaviour.temporaryFailures {
                    say("451 4.3.0 try again later\r\n")
                } else {
                    say("250 2.1.0 ok\r\n")
                }
            } else if upper.hasPrefix("RCPT TO:") {
                say(behaviour.rejectRecipient ? "550 5.1.1 no such mailbox\r\n" : "250 2.1.5 ok\r\n")
            } else if upper == "DATA" {
                say("354 end with <CRLF>.<CRLF>\r\n")
                guard let data = reader.data() else { return }
                locked { _messages.append(data) }
                say("250 2.0.0 queued\r\n")
            } else if upper == "QUIT" {
                say("221 2.0.0 bye\r\n")
                return
            } else if upper == "RSET" || upper == "NOOP" {
                say("250 ok\r\n")
            } else {
                say("500 5.5.1 unknown command\r\n")
            }
        }
    }
}

/// Reads CRLF lines, and the raw DATA section up to `CRLF.CRLF` (still dot-stuffed).
struct SMTPLineReader {
    let fd: Int32
    var buffer: [UInt8] = []

    init(fd: Int32) { self.fd = fd }

    private mutating func fill() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 4096)
        let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return false }
        buffer += chunk[..<count]
        return true
    }

    mutating func next() -> String? {
        while true {
            if let index = buffer.firstIndex(of: 0x0A) {
                var line = Array(buffer[..<index])
                buffer.removeSubrange(...index)
                if line.last == 0x0D { line.removeLast() }
                return String(decoding: line, as: UTF8.self)
            }
            guard fill() else { return nil }
        }
    }

    /// The DATA bytes as sent, without the final `.CRLF`.
    mutating func data() -> [UInt8]? {
        let end = Array("\r\n.\r\n".utf8)
        while true {
            if buffer.starts(with: Array(".\r\n".utf8)) {
                buffer.removeFirst(3)
                return []
            }
            if let range = buffer.firstRange(of: end) {
                let data = Array(buffer[..<(range.lowerBound + 2)])
                buffer.removeSubrange(..<range.upperBound)
                return data
            }
            guard fill() else { return nil }
        }
    }
}
