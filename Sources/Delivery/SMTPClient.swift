import FoundationEssentials
import Platform
import Secrets
import TLS

/// Why a send failed. `transient` (4xx replies, timeouts, dropped connections) is retried with
/// back-off; `permanent` (5xx replies, TLS verification, configuration) is not.
public struct SMTPError: Error, Sendable, CustomStringConvertible, Equatable {
    public enum Kind: Sendable, Equatable { case transient, permanent }
    public let kind: Kind
    /// What failed, for operators: the step, and the server's reply code and text (never credentials or the message).
    public let detail: String
    /// The server's reply code, when a reply caused the failure.
    public let replyCode: Int?

    public init(_ kind: Kind, _ detail: String, replyCode: Int? = nil) {
        self.kind = kind
        self.detail = detail
        self.replyCode = replyCode
    }

    public var description: String { "\(kind == .permanent ? "permanent" : "transient") SMTP failure: \(detail)" }
}

/// A blocking SMTP client (RFC 5321) for worker threads: EHLO (HELO fallback), STARTTLS or
/// implicit TLS through the TLS layer (certificate, host name or IP address verified), AUTH PLAIN / LOGIN,
/// dot-stuffing, a timeout on connect and on every reply, and retries with exponential back-off
/// on transient failures. One connection per message: sends are rare (reset mails, codes).
public final class SMTPClient: Sendable {
    public struct Settings: Sendable {
        public var url: SMTPURL
        /// A PEM file of trusted CAs instead of the system store (a test server's self-signed cert).
        public var caFile: String?
        /// The name we give in EHLO.
        public var heloName = "localhost"
        public var connectTimeoutMilliseconds = 10_000
        /// For each reply (RFC 5321 §4.5.3.2 allows minutes; mail must not hold a worker that long).
        public var replyTimeoutMilliseconds = 30_000
        /// Tries per message, the first included.
        public var maxAttempts = 3
        /// Wait before the second try; doubles each time.
        public var initialBackoffMilliseconds = 1_000
        public var maxReplyLineBytes = 4096
        public var maxReplyLines = 128

        public init(url: SMTPURL) { self.url = url }
    }

    public let settings: Settings
    private let tls: TLSClientContext?

    public init(settings: Settings) throws(SMTPError) {
        precondition(settings.maxAttempts >= 1 && settings.initialBackoffMilliseconds >= 0)
        self.settings = settings
        ignoreBrokenPipeSignals()  // OpenSSL writes with write(2): a dropped connection must not kill the process.
        do {
            tls = settings.url.security == .never ? nil : try TLSClientContext(trustedCertificatesFile: settings.caFile)
        } catch {
            throw SMTPError(tls: error)
        }
    }

    /// Sends one message to every recipient, retrying transient failures. `message` is the
    /// RFC 5322 text (CRLF or LF line ends); dot-stuffing is done here.
    public func send(from sender: String, to recipients: [String], message: [UInt8]) throws(SMTPError) {
        guard MailAddress.isSafeAddress(sender) else { throw SMTPError(.permanent, "the sender address is not acceptable") }
        guard !recipients.isEmpty, recipients.allSatisfy(MailAddress.isSafeAddress) else {
            throw SMTPError(.permanent, "a recipient address is not acceptable")
        }
        let retry = RetryPolicy(
            maxAttempts: settings.maxAttempts, initialBackoffMilliseconds: settings.initialBackoffMilliseconds, maxBackoffMilliseconds: 60_000)
        try retry.run(
            { () throws(SMTPError) in try sendOnce(from: sender, to: recipients, message: message) },
            isPermanent: { $0.kind == .permanent }, gaveUp: { error, _ in error })
    }

    private func sendOnce(from sender: String, to recipients: [String], message: [UInt8]) throws(SMTPError) {
        let session = try SMTPSession(settings: settings, tls: tls)
        defer { session.close() }
        try session.handshake()
        try session.expect("MAIL FROM:<\(sender)>", step: "MAIL FROM", codes: [250])
        for recipient in recipients {
            try session.expect("RCPT TO:<\(recipient)>", step: "RCPT TO", codes: [250, 251])
        }
        try session.expect("DATA", step: "DATA", codes: [354])
        try session.write(Self.dotStuffed(message))
        _ = try session.reply(step: "end of data", codes: [250])
        session.quit()
    }

    /// CRLF line ends, a `.` doubled at the start of every line (RFC 5321 §4.5.2), and the
    /// closing `CRLF.CRLF`.
    public static func dotStuffed(_ message: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(message.count + message.count / 64 + 5)
        var atLineStart = true
        var previous: UInt8 = 0
        for byte in message {
            if byte == 0x0A {
                if previous != 0x0D { out.append(0x0D) }
                out.append(0x0A)
                atLineStart = true
            } else {
                if previous == 0x0D { out.append(0x0A); atLineStart = true }  // a bare CR ends a line too
                if byte != 0x0D {
                    if atLineStart && byte == UInt8(ascii: ".") { out.append(UInt8(ascii: ".")) }
                    atLineStart = false
                }
                out.append(byte)
            }
            previous = byte
        }
        if previous == 0x0D { out.append(0x0A) } else if !out.isEmpty && previous != 0x0A { out += [0x0D, 0x0A] }
        out += Array(".\r\n".utf8)
        return out
    }
}

/// One SMTP conversation over one connection. Not shared between threads.
final class SMTPSession {
    private let settings: SMTPClient.Settings
    private let tlsContext: TLSClientContext?
    private let socket: BlockingSocket
    /// The socket, or TLS over it once started.
    private var stream: BlockingStream
    private var buffer: [UInt8] = []
    private var isTLS = false
    private var extensions: [String: String] = [:]

    init(settings: SMTPClient.Settings, tls: TLSClientContext?) throws(SMTPError) {
        self.settings = settings
        self.tlsContext = tls
        do {
            socket = try BlockingSocket.connect(
                host: settings.url.host, port: settings.url.port, connectTimeoutMilliseconds: settings.connectTimeoutMilliseconds,
                ioTimeoutMilliseconds: settings.replyTimeoutMilliseconds)
        } catch {
            throw SMTPError(.transient, error.description)
        }
        stream = socket
        if settings.url.security == .implicit {
            try startTLS()
        }
    }

    func close() { stream.close() }

    func quit() {
        try? write(Array("QUIT\r\n".utf8))
        _ = try? reply(step: "QUIT", codes: [221])
    }

    /// Greeting, EHLO, STARTTLS (+ EHLO again), AUTH.
    func handshake() throws(SMTPError) {
        _ = try reply(step: "greeting", codes: [220])
        try hello()
        let url = settings.url
        if !isTLS && url.security != .never {
            if extensions["STARTTLS"] != nil {
                try expect("STARTTLS", step: "STARTTLS", codes: [220])
                try startTLS()
                try hello()
            } else if url.security == .required {
                throw SMTPError(.permanent, "the server does not offer STARTTLS and the URL requires it (starttls=required)")
            }
        }
        if let username = url.username {
            guard isTLS || url.allowInsecureAuth else {
                throw SMTPError(.permanent, "refusing to send credentials without TLS (offer STARTTLS, use smtps://, or set insecure_auth=true)")
            }
            try authenticate(username: username, password: url.password ?? "")
        }
    }

    private func hello() throws(SMTPError) {
        try write(Array("EHLO \(settings.heloName)\r\n".utf8))
        do {
            let lines = try reply(step: "EHLO", codes: [250])
            extensions = [:]
            for line in lines.dropFirst() {
                let words = line.split(separator: " ", maxSplits: 1)
                guard let keyword = words.first else { continue }
                extensions[keyword.uppercased()] = words.count > 1 ? String(words[1]) : ""
            }
        } catch where error.replyCode == 500 || error.replyCode == 502 {
            try expect("HELO \(settings.heloName)", step: "HELO", codes: [250])
            extensions = [:]
        }
    }

    private func authenticate(username: String, password: String) throws(SMTPError) {
        let offered = Set((extensions["AUTH"] ?? "").uppercased().split(separator: " ").map(String.init))
        let mechanism: SMTPURL.AuthMechanism
        if let chosen = settings.url.authMechanism {
            guard offered.contains(chosen.rawValue) else { throw SMTPError(.permanent, "the server does not offer AUTH \(chosen.rawValue)") }
            mechanism = chosen
        } else if offered.contains("PLAIN") {
            mechanism = .plain
        } else if offered.contains("LOGIN") {
            mechanism = .login
        } else {
            throw SMTPError(.permanent, "the server offers neither AUTH PLAIN nor AUTH LOGIN")
        }
        switch mechanism {
        case .plain:
            var credentials = [0] + Array(username.utf8) + [0] + Array(password.utf8)
            defer { secureWipe(&credentials) }
            try write(Array("AUTH PLAIN \(Base64.encode(credentials))\r\n".utf8))
            _ = try reply(step: "AUTH PLAIN", codes: [235])
        case .login:
            try expect("AUTH LOGIN", step: "AUTH LOGIN", codes: [334])
            try expect(Base64.encode(Array(username.utf8)), step: "AUTH LOGIN user name", codes: [334])
            try expect(Base64.encode(Array(password.utf8)), step: "AUTH LOGIN password", codes: [235])
        }
    }

    private func startTLS() throws(SMTPError) {
        guard let tlsContext else { throw SMTPError(.permanent, "TLS is not configured") }
        guard !isTLS else { throw SMTPError(.permanent, "TLS started twice") }
        guard buffer.isEmpty else { throw SMTPError(.permanent, "the server sent data before the TLS handshake") }
        do { stream = try BlockingTLSStream(context: tlsContext, over: socket, host: settings.url.host) } catch { throw SMTPError(tls: error) }
        isTLS = true
    }

    /// Sends one command line and reads its reply.
    func expect(_ command: String, step: String, codes: Set<Int>) throws(SMTPError) {
        try write(Array("\(command)\r\n".utf8))
        _ = try reply(step: step, codes: codes)
    }

    func write(_ bytes: [UInt8]) throws(SMTPError) {
        do { try stream.write(bytes) } catch {
            throw SMTPError(.transient, error.kind == .timedOut ? "the server did not take data in time" : error.detail)
        }
    }

    /// Reads one (possibly multi-line) reply; returns its text lines when the code is expected,
    /// else throws: 4xx transient, 5xx (and anything else) permanent.
    @discardableResult
    func reply(step: String, codes: Set<Int>) throws(SMTPError) -> [String] {
        var lines: [String] = []
        var code = 0
        while true {
            let line = try readLine()
            guard line.utf8.count >= 3, let value = Int(line.prefix(3)), (200...599).contains(value) else {
                throw SMTPError(.permanent, "\(step): malformed reply from the server")
            }
            guard lines.count < settings.maxReplyLines else { throw SMTPError(.permanent, "\(step): reply too long") }
            if !lines.isEmpty && value != code { throw SMTPError(.permanent, "\(step): reply lines disagree on the code") }
            code = value
            lines.append(String(line.dropFirst(4)))
            let separator = line.dropFirst(3).first
            if separator != "-" { break }
        }
        if codes.contains(code) { return lines }
        let text = lines.joined(separator: " ").prefix(200)
        let kind: SMTPError.Kind = (400...499).contains(code) ? .transient : .permanent
        throw SMTPError(kind, "\(step): server replied \(code) \(text)", replyCode: code)
    }

    private func readLine() throws(SMTPError) -> String {
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            if let newline = buffer.firstIndex(of: 0x0A) {
                var line = Array(buffer[..<newline])
                buffer.removeSubrange(...newline)
                if line.last == 0x0D { line.removeLast() }
                return String(decoding: line, as: UTF8.self)
            }
            guard buffer.count <= settings.maxReplyLineBytes else { throw SMTPError(.permanent, "reply line longer than \(settings.maxReplyLineBytes) bytes") }
            let count: Int
            do { count = try stream.read(into: &chunk) } catch {
                throw SMTPError(.transient, error.kind == .timedOut ? "the server did not reply within \(settings.replyTimeoutMilliseconds) ms" : error.detail)
            }
            guard count > 0 else { throw SMTPError(.transient, "the server closed the connection") }
            buffer += chunk[..<count]
        }
    }
}

extension SMTPError {
    /// A certificate the client does not trust, or TLS settings it cannot load, will not get better
    /// by retrying; anything else on the way (a timeout, a reset) might.
    init(tls error: TLSError) {
        switch error.kind {
        case .untrustedPeer: self.init(.permanent, "TLS certificate verification failed: \(error)")
        case .configuration: self.init(.permanent, error.description)
        case .handshake, .timedOut, .io: self.init(.transient, error.description)
        }
    }
}
