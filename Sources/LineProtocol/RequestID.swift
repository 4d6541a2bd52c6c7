/// A request's id: one a caller vouched for, or one issued here as an issuer's prefix and a
/// number. An issued id is spelled out only when something reads it (a log line, the access log)
/// and written into a forwarded call's `meta` from bytes its issuer encoded once: the requests
/// nobody logs one by one (pings, forwarded or not) never build the string. Two ids are equal
/// when they read the same.
public struct RequestID: Sendable, Equatable, CustomStringConvertible {
    private enum Source: Sendable {
        case given(String)
        case issued(RequestIDIssuer, request: UInt64)
    }

    private let source: Source

    public init(_ given: String) { source = .given(given) }

    public init(issuer: RequestIDIssuer, request: UInt64) { source = .issued(issuer, request: request) }

    public static func == (left: RequestID, right: RequestID) -> Bool { left.description == right.description }

    /// The id as a JSON string, without building it first.
    func append<Sink: ByteSink>(to buffer: inout Sink) {
        switch source {
        case .given(let text):
            JSON.appendString(text, to: &buffer)
        case .issued(let issuer, let request):
            issuer.quotedHead.withUnsafeBufferPointer { buffer.append(bytes: $0) }
            Self.appendNumber(request, to: &buffer)
        }
    }

    /// Writes a forwarded call's `meta` opening for `client`, `{"client":"…","request_id":"…"`,
    /// from the bytes this id's issuer encoded once, and answers true; writes nothing and answers
    /// false unless the id was issued for that very client.
    func appendMetaOpening<Sink: ByteSink>(client: String?, to buffer: inout Sink) -> Bool {
        guard case .issued(let issuer, let request) = source, issuer.client == client else { return false }
        issuer.metaHead.withUnsafeBufferPointer { buffer.append(bytes: $0) }
        Self.appendNumber(request, to: &buffer)
        return true
    }

    /// The number and the closing quote.
    private static func appendNumber<Sink: ByteSink>(_ request: UInt64, to buffer: inout Sink) {
        buffer.append(decimal: request)
        buffer.append(ASCII.quote)
    }

    public var description: String {
        switch source {
        case .given(let text): text
        case .issued(let issuer, let request): issuer.text + String(request)
        }
    }
}

/// What every id of one lane shares: a prefix unique to the process (and loop), the number of
/// the connection that issues them (nil for a door with no connections of its own), and the
/// client that connection serves; with the bytes a forwarded call's `meta` opens with, encoded
/// once per connection instead of once per call.
public final class RequestIDIssuer: Sendable {
    let client: String?
    /// Every id's text up to its number: the prefix, then the connection's number and a dot.
    let text: String
    /// `text` as the start of a JSON string: its opening quote, then `text` escaped.
    let quotedHead: [UInt8]
    /// `{"client":"…","request_id":` and `quotedHead` (`{"request_id":` without a client).
    let metaHead: [UInt8]

    public init(prefix: String, connection: UInt64?, client: String?) {
        self.client = client
        text = connection.map { prefix + String($0) + "." } ?? prefix
        var quoted: [UInt8] = [ASCII.quote]
        JSON.appendStringContents(text, to: &quoted)
        quotedHead = quoted
        var head: [UInt8] = []
        if let client {
            head.append(literal: #"{"client":"#)
            JSON.appendString(client, to: &head)
            head.append(literal: #","request_id":"#)
        } else {
            head.append(literal: #"{"request_id":"#)
        }
        metaHead = head + quoted
    }
}
