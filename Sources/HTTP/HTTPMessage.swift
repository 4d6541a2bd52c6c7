import LineProtocol

/// Header fields in arrival order. Names compare case-insensitively; values are kept as sent
/// (already checked by the parser: no CR, LF or NUL, surrounding whitespace removed).
public struct HTTPHeaders: Sendable, Equatable, Sequence, ExpressibleByDictionaryLiteral {
    public private(set) var fields: [(name: String, value: String)] = []

    public init() {}

    public init(_ fields: [(String, String)]) {
        for (name, value) in fields { add(name, value) }
    }

    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(elements)
    }

    public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool {
        lhs.fields.elementsEqual(rhs.fields) { $0.name == $1.name && $0.value == $1.value }
    }

    public mutating func add(_ name: String, _ value: String) { fields.append((name, value)) }

    /// Replaces every field of that name with one.
    public mutating func set(_ name: String, _ value: String) {
        remove(name)
        add(name, value)
    }

    public mutating func remove(_ name: String) {
        fields.removeAll { Self.same($0.name, name) }
    }

    /// The first value of `name`, or nil.
    public subscript(name: String) -> String? {
        fields.first { Self.same($0.name, name) }?.value
    }

    public func values(_ name: String) -> [String] {
        fields.filter { Self.same($0.name, name) }.map(\.value)
    }

    public func contains(_ name: String) -> Bool { self[name] != nil }

    /// True when a comma-separated header (`Connection`) lists `token`, case-insensitively.
    public func hasToken(_ token: String, in name: String) -> Bool {
        values(name).contains { value in
            value.split(separator: ",").contains { $0.trimmingHTTPWhitespace().lowercased() == token.lowercased() }
        }
    }

    public var count: Int { fields.count }

    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> { fields.makeIterator() }

    /// ASCII case-insensitive equality without allocating (field names are tokens: ASCII).
    static func same(_ left: String, _ right: String) -> Bool {
        left.utf8.count == right.utf8.count && left.utf8.elementsEqual(right.utf8) { lower($0) == lower($1) }
    }

    private static func lower(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
    }
}

public struct HTTPVersion: Sendable, Equatable, CustomStringConvertible {
    public let major: Int
    public let minor: Int

    public static let http1_0 = HTTPVersion(major: 1, minor: 0)
    public static let http1_1 = HTTPVersion(major: 1, minor: 1)

    public var description: String { "HTTP/\(major).\(minor)" }
}

/// One parsed request: head and the whole body (bodies are bounded, so they are never streamed).
public struct HTTPRequest: Sendable, Equatable {
    public var method: String
    /// The request target as sent (`/v1/identity/login?x=1`).
    public var target: String
    /// The target's path, without the query.
    public var path: String
    /// The query string after `?`, without it; nil when absent.
    public var query: String?
    public var version: HTTPVersion
    public var headers: HTTPHeaders
    public var body: [UInt8]
    /// Whether the connection may stay open after this request (HTTP/1.1 default yes,
    /// HTTP/1.0 default no, `Connection: close` / `keep-alive` override).
    public var keepAlive: Bool

    public init(
        method: String, target: String, version: HTTPVersion = .http1_1, headers: HTTPHeaders = HTTPHeaders(),
        body: [UInt8] = [], keepAlive: Bool = true
    ) {
        self.method = method
        self.target = target
        if let question = target.firstIndex(of: "?") {
            self.path = String(target[..<question])
            self.query = String(target[target.index(after: question)...])
        } else {
            self.path = target
            self.query = nil
        }
        self.version = version
        self.headers = headers
        self.body = body
        self.keepAlive = keepAlive
    }
}

/// An answer. The server adds `Content-Length`, `Date`, `Server` and `Connection`;
/// handlers set everything else.
public struct HTTPResponse: Sendable, Equatable {
    public var status: Int
    public var headers: HTTPHeaders
    public var body: [UInt8]
    /// Ask the server to close the connection after this response.
    public var closesConnection: Bool

    public init(status: Int, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = [], closesConnection: Bool = false) {
        precondition((100...999).contains(status), "HTTP status must have three digits")
        self.status = status
        self.headers = headers
        self.body = body
        self.closesConnection = closesConnection
    }

    /// `application/json` with the encoded value.
    public static func json(_ status: Int, _ value: JSON, headers: HTTPHeaders = HTTPHeaders()) -> HTTPResponse {
        var all = headers
        all.set("Content-Type", "application/json")
        return HTTPResponse(status: status, headers: all, body: value.encoded())
    }

    /// `text/plain; charset=utf-8`.
    public static func text(_ status: Int, _ text: String, headers: HTTPHeaders = HTTPHeaders()) -> HTTPResponse {
        var all = headers
        if !all.contains("Content-Type") { all.set("Content-Type", "text/plain; charset=utf-8") }
        return HTTPResponse(status: status, headers: all, body: Array(text.utf8))
    }

    /// A JSON error body `{"error": {"code", "message", "data": {"reason"}}}` with the status as code.
    public static func error(_ status: Int, reason: String, _ message: String, headers: HTTPHeaders = HTTPHeaders()) -> HTTPResponse {
        let error: JSON = ["code": .int(Int64(status)), "message": .string(message), "data": ["reason": .string(reason)]]
        return json(status, ["error": error], headers: headers)
    }
}

public enum HTTPStatus {
    /// The reason phrase for the status line (informational only; clients ignore it).
    public static func phrase(_ status: Int) -> String {
        switch status {
        case 100: "Continue"
        case 200: "OK"
        case 204: "No Content"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 409: "Conflict"
        case 410: "Gone"
        case 411: "Length Required"
        case 413: "Content Too Large"
        case 414: "URI Too Long"
        case 415: "Unsupported Media Type"
        case 417: "Expectation Failed"
        case 422: "Unprocessable Content"
        case 423: "Locked"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        case 505: "HTTP Version Not Supported"
        default: "Status \(status)"
        }
    }
}

extension StringProtocol {
    public func trimmingHTTPWhitespace() -> String {
        var scalars = Substring(self)
        while let first = scalars.first, first == " " || first == "\t" { scalars.removeFirst() }
        while let last = scalars.last, last == " " || last == "\t" { scalars.removeLast() }
        return String(scalars)
    }
}
