/// Limits on one request, each with the status it answers when passed.
public struct HTTPParserLimits: Sendable, Equatable {
    /// Longest request line (`POST /v1/x/y HTTP/1.1`) without its CRLF, in bytes: 414 beyond.
    public var maxRequestLineBytes = 8 * 1024
    /// Longest header section (the header lines and the blank line), in bytes: 431 beyond.
    public var maxHeaderBytes = 16 * 1024
    /// Most header fields in one request: 431 beyond.
    public var maxHeaderCount = 64
    /// Largest `Content-Length`: 413 beyond.
    public var maxBodyBytes = 64 * 1024

    public init() {}
}

/// Why a request was refused. `message` is a constant text and never echoes input bytes.
/// After a failure the connection cannot be re-synchronised: the server answers and closes.
public struct HTTPParseFailure: Error, Sendable, Equatable {
    public let status: Int
    public let message: String

    init(_ status: Int, _ message: String) {
        self.status = status
        self.message = message
    }
}

public enum HTTPParseEvent: Sendable, Equatable {
    case request(HTTPRequest)
    /// The head of a request carrying `Expect: 100-continue` is complete and its body has not
    /// all arrived: the server may send `100 Continue`. At most once per request.
    case continueExpected
    case failure(HTTPParseFailure)
}

/// HTTP/1.1 request framing (RFC 9112), pure and incremental like `LineFramer`: append byte chunks
/// as they arrive, take complete requests with `next()`. Bodies need `Content-Length`;
/// `Transfer-Encoding` is refused (501), so a body is never read two ways. Strict on purpose:
/// lines end in CRLF (a bare LF or CR is 400), no obs-fold, no whitespace before a colon,
/// one `Content-Length` of plain digits, one `Host`.
public struct HTTPRequestParser: Sendable {
    public enum Phase: Sendable, Equatable {
        /// Nothing of the next request buffered.
        case idle
        /// Part of a request head is buffered.
        case head
        /// The head is parsed; body bytes are still due.
        case body
        /// A failure was returned; nothing more will be parsed.
        case failed
    }

    public let limits: HTTPParserLimits
    private var buffer: [UInt8] = []
    private var readIndex = 0
    /// Where the search for the end of the head resumes.
    private var scanIndex = 0
    private var blankLinesSkipped = 0
    private var pendingRequest: HTTPRequest?
    private var bodyRemaining = 0
    private var continuePending = false
    private var failed = false

    private static let cr: UInt8 = 0x0D
    private static let lf: UInt8 = 0x0A

    public init(limits: HTTPParserLimits = HTTPParserLimits()) {
        precondition(limits.maxRequestLineBytes > 0 && limits.maxHeaderBytes > 0 && limits.maxHeaderCount > 0 && limits.maxBodyBytes >= 0)
        self.limits = limits
    }

    public var phase: Phase {
        if failed { return .failed }
        if pendingRequest != nil { return .body }
        return readIndex < buffer.count ? .head : .idle
    }

    public var bufferedByteCount: Int { buffer.count - readIndex }

    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard !failed else { return }
        compact()
        buffer.append(contentsOf: bytes)
    }

    public mutating func append(_ bytes: some Collection<UInt8>) {
        guard !failed else { return }
        compact()
        buffer.append(contentsOf: bytes)
    }

    private mutating func compact() {
        guard readIndex > 0, readIndex >= 4096 || readIndex == buffer.count, readIndex * 2 >= buffer.count else { return }
        buffer.removeSubrange(0..<readIndex)
        scanIndex = max(0, scanIndex - readIndex)
        readIndex = 0
    }

    /// The next complete request, a `100 Continue` opportunity, or a failure; nil when more bytes are needed.
    public mutating func next() -> HTTPParseEvent? {
        if failed { return nil }
        if pendingRequest != nil { return nextBody() }
        switch findHead() {
        case .none:
            return nil
        case .failure(let failure):
            return fail(failure)
        case .head(let end):
            let head = buffer[readIndex..<end]
            readIndex = end + 4
            scanIndex = readIndex
            blankLinesSkipped = 0
            switch Self.parseHead(head, limits: limits) {
            case .failure(let failure):
                return fail(failure)
            case .success(let (request, contentLength, expectsContinue)):
                if contentLength == 0 { return .request(request) }
                pendingRequest = request
                bodyRemaining = contentLength
                continuePending = expectsContinue
                return nextBody()
            }
        }
    }

    private mutating func fail(_ failure: HTTPParseFailure) -> HTTPParseEvent {
        failed = true
        buffer = []
        readIndex = 0
        pendingRequest = nil
        return .failure(failure)
    }

    private mutating func nextBody() -> HTTPParseEvent? {
        guard var request = pendingRequest else { return nil }
        let available = buffer.count - readIndex
        if available < bodyRemaining {
            if continuePending {
                continuePending = false
                return .continueExpected
            }
            return nil
        }
        request.body = Array(buffer[readIndex..<(readIndex + bodyRemaining)])
        readIndex += bodyRemaining
        scanIndex = readIndex
        bodyRemaining = 0
        continuePending = false
        pendingRequest = nil
        return .request(request)
    }

    private enum HeadSearch {
        case none
        case head(end: Int)
        case failure(HTTPParseFailure)
    }

    /// Finds the CRLFCRLF ending the head, scanning each byte once; refuses bare LF and NUL early
    /// and enforces the size limits before the end is seen.
    private mutating func findHead() -> HeadSearch {
        // RFC 9112 2.2: ignore a few empty lines before a request line.
        while buffer.count - readIndex >= 2 && buffer[readIndex] == Self.cr && buffer[readIndex + 1] == Self.lf {
            blankLinesSkipped += 1
            if blankLinesSkipped > 4 { return .failure(HTTPParseFailure(400, "too many empty lines before the request")) }
            readIndex += 2
            scanIndex = readIndex
        }
        if readIndex == buffer.count { return .none }
        var index = max(scanIndex, readIndex)
        while index < buffer.count {
            let byte = buffer[index]
            if byte == 0 { return .failure(HTTPParseFailure(400, "NUL byte in the request head")) }
            if byte == Self.lf {
                if index == readIndex || buffer[index - 1] != Self.cr {
                    return .failure(HTTPParseFailure(400, "lines must end with CRLF"))
                }
                if index - readIndex >= 3 && buffer[index - 2] == Self.lf && buffer[index - 3] == Self.cr {
                    return .head(end: index - 3)
                }
            }
            index += 1
        }
        scanIndex = index
        return checkPartialHeadSize()
    }

    private func checkPartialHeadSize() -> HeadSearch {
        let available = buffer.count - readIndex
        let lineLimit = limits.maxRequestLineBytes + 2
        guard let lineEnd = buffer[readIndex..<min(buffer.count, readIndex + lineLimit)].firstIndex(of: Self.lf) else {
            if available > lineLimit { return .failure(HTTPParseFailure(414, "request line too long")) }
            return .none
        }
        let headerBytes = buffer.count - (lineEnd + 1)
        if headerBytes > limits.maxHeaderBytes { return .failure(HTTPParseFailure(431, "header section too large")) }
        return .none
    }
}

// MARK: Head parsing (pure functions over one complete head)

extension HTTPRequestParser {
    typealias ParsedHead = (request: HTTPRequest, contentLength: Int, expectsContinue: Bool)

    /// `head` runs from the request line up to (excluding) the CRLF CRLF.
    static func parseHead(_ head: ArraySlice<UInt8>, limits: HTTPParserLimits) -> Result<ParsedHead, HTTPParseFailure> {
        let lines = splitLines(head)
        guard let requestLine = lines.first else { return .failure(HTTPParseFailure(400, "empty request")) }
        if requestLine.count > limits.maxRequestLineBytes { return .failure(HTTPParseFailure(414, "request line too long")) }
        let headerBytes = lines.dropFirst().reduce(2) { $0 + $1.count + 2 }
        if headerBytes > limits.maxHeaderBytes { return .failure(HTTPParseFailure(431, "header section too large")) }
        if lines.count - 1 > limits.maxHeaderCount { return .failure(HTTPParseFailure(431, "too many header fields")) }
        let start: (method: String, target: String, version: HTTPVersion)
        switch parseRequestLine(requestLine) {
        case .failure(let failure): return .failure(failure)
        case .success(let value): start = value
        }
        var headers = HTTPHeaders()
        var facts = FramingFields()
        for line in lines.dropFirst() {
            switch parseField(line) {
            case .failure(let failure): return .failure(failure)
            case .success(let (name, value)):
                facts.note(name, value)
                headers.add(name, value)
            }
        }
        return interpret(method: start.method, target: start.target, version: start.version, headers: headers, facts: facts, limits: limits)
    }

    private static func splitLines(_ head: ArraySlice<UInt8>) -> [ArraySlice<UInt8>] {
        var lines: [ArraySlice<UInt8>] = []
        var lineStart = head.startIndex
        var index = head.startIndex
        while index < head.endIndex {
            if head[index] == cr, index + 1 < head.endIndex, head[index + 1] == lf {
                lines.append(head[lineStart..<index])
                index += 2
                lineStart = index
            } else {
                index += 1
            }
        }
        lines.append(head[lineStart..<head.endIndex])
        return lines
    }

    public static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"), UInt8(ascii: "'"),
            UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"),
            UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    private static func parseRequestLine(_ line: ArraySlice<UInt8>) -> Result<(String, String, HTTPVersion), HTTPParseFailure> {
        let parts = line.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, !parts[1].isEmpty, parts[0].allSatisfy(isTokenByte) else {
            return .failure(HTTPParseFailure(400, "malformed request line"))
        }
        guard parts[1].allSatisfy({ (0x21...0x7E).contains($0) }) else {
            return .failure(HTTPParseFailure(400, "malformed request target"))
        }
        let versionBytes = Array(parts[2])
        let digits = UInt8(ascii: "0")...UInt8(ascii: "9")
        guard versionBytes.count == 8, versionBytes.starts(with: Array("HTTP/".utf8)), digits.contains(versionBytes[5]),
            versionBytes[6] == UInt8(ascii: "."), digits.contains(versionBytes[7])
        else { return .failure(HTTPParseFailure(400, "malformed HTTP version")) }
        let version = HTTPVersion(major: Int(versionBytes[5] - digits.lowerBound), minor: Int(versionBytes[7] - digits.lowerBound))
        guard version == .http1_1 || version == .http1_0 else {
            return .failure(HTTPParseFailure(505, "only HTTP/1.1 and HTTP/1.0 are supported"))
        }
        let method = String(decoding: parts[0], as: UTF8.self)
        guard let target = originForm(String(decoding: parts[1], as: UTF8.self), method: method) else {
            return .failure(HTTPParseFailure(400, "malformed request target"))
        }
        return .success((method, target, version))
    }

    /// Origin form as is; absolute form (`http://host/path`) reduced to its path; `*` for OPTIONS only.
    private static func originForm(_ target: String, method: String) -> String? {
        if target.hasPrefix("/") { return target.hasPrefix("//") ? nil : target }
        if target == "*" { return method == "OPTIONS" ? target : nil }
        for scheme in ["http://", "https://"] where target.lowercased().hasPrefix(scheme) {
            let rest = target.dropFirst(scheme.count)
            guard let slash = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) else { return "/" }
            let path = String(rest[slash...])
            return path.hasPrefix("?") ? "/" + path : path
        }
        return nil
    }

    private static func parseField(_ line: ArraySlice<UInt8>) -> Result<(String, String), HTTPParseFailure> {
        guard let first = line.first else { return .failure(HTTPParseFailure(400, "empty header line")) }
        if first == UInt8(ascii: " ") || first == UInt8(ascii: "\t") {
            return .failure(HTTPParseFailure(400, "obsolete line folding is not accepted"))
        }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else {
            return .failure(HTTPParseFailure(400, "header line without a colon"))
        }
        let name = line[line.startIndex..<colon]
        guard !name.isEmpty, name.allSatisfy(isTokenByte) else {
            return .failure(HTTPParseFailure(400, "malformed header name"))
        }
        let value = line[(colon + 1)...]
        // field-value: VCHAR, obs-text, SP and HTAB; any other control byte (bare CR, NUL) is refused.
        guard value.allSatisfy({ $0 == 0x09 || $0 >= 0x20 && $0 != 0x7F }) else {
            return .failure(HTTPParseFailure(400, "control character in a header value"))
        }
        return .success((String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self).trimmingHTTPWhitespace()))
    }

    /// The fields that decide framing and connection handling, gathered in the one pass over the head.
    struct FramingFields {
        var hosts = 0
        var contentLengths: [String] = []
        var transferEncoding = false
        var expectations: [String] = []
        var connectionTokens: [String] = []

        mutating func note(_ name: String, _ value: String) {
            switch name.utf8.count {
            case 4 where HTTPHeaders.same(name, "Host"): hosts += 1
            case 6 where HTTPHeaders.same(name, "Expect"): expectations.append(value)
            case 10 where HTTPHeaders.same(name, "Connection"):
                connectionTokens += value.split(separator: ",").map { $0.trimmingHTTPWhitespace().lowercased() }
            case 14 where HTTPHeaders.same(name, "Content-Length"): contentLengths.append(value)
            case 17 where HTTPHeaders.same(name, "Transfer-Encoding"): transferEncoding = true
            default: break
            }
        }
    }

    /// The semantic checks that keep framing unambiguous: one Host, one plain Content-Length,
    /// no Transfer-Encoding; and the keep-alive decision.
    private static func interpret(
        method: String, target: String, version: HTTPVersion, headers: HTTPHeaders, facts: FramingFields, limits: HTTPParserLimits
    ) -> Result<ParsedHead, HTTPParseFailure> {
        if facts.hosts > 1 || (version == .http1_1 && facts.hosts == 0) {
            return .failure(HTTPParseFailure(400, "exactly one Host header is required"))
        }
        if facts.transferEncoding {
            if !facts.contentLengths.isEmpty { return .failure(HTTPParseFailure(400, "both Content-Length and Transfer-Encoding")) }
            return .failure(HTTPParseFailure(501, "Transfer-Encoding is not supported; send Content-Length"))
        }
        if facts.contentLengths.count > 1 { return .failure(HTTPParseFailure(400, "more than one Content-Length")) }
        var contentLength = 0
        if let text = facts.contentLengths.first {
            let digits = UInt8(ascii: "0")...UInt8(ascii: "9")
            guard !text.isEmpty, text.utf8.count <= 18, text.utf8.allSatisfy({ digits.contains($0) }), let value = Int(text) else {
                return .failure(HTTPParseFailure(400, "malformed Content-Length"))
            }
            if value > limits.maxBodyBytes { return .failure(HTTPParseFailure(413, "body larger than \(limits.maxBodyBytes) bytes")) }
            contentLength = value
        }
        var expectsContinue = false
        if let expectation = facts.expectations.first {
            guard expectation.lowercased() == "100-continue", facts.expectations.count == 1 else {
                return .failure(HTTPParseFailure(417, "only Expect: 100-continue is supported"))
            }
            expectsContinue = version == .http1_1
        }
        let keepAlive: Bool
        if facts.connectionTokens.contains("close") {
            keepAlive = false
        } else if version == .http1_0 {
            keepAlive = facts.connectionTokens.contains("keep-alive")
        } else {
            keepAlive = true
        }
        let request = HTTPRequest(method: method, target: target, version: version, headers: headers, keepAlive: keepAlive)
        return .success((request, contentLength, expectsContinue))
    }
}
