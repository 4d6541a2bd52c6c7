/// A JSON-RPC 2.0 request or notification.
public struct RPCRequest: Sendable, Equatable, LineEncodable {
    public var method: String
    /// An object or an array, or nil when absent.
    public var params: JSON?
    /// nil for a notification (no `id` member); otherwise `.string`, `.int`, `.double` or `.null`.
    public var id: JSON?
    /// Envelope member used only between Latchkey processes (client address, request id, budget, token).
    public var meta: RequestMeta?

    public init(method: String, params: JSON? = nil, id: JSON?, meta: RequestMeta? = nil) {
        self.method = method
        self.params = params
        self.id = id
        self.meta = meta
    }

    /// True when the request has no `id` member, so no answer is sent.
    public var isNotification: Bool { id == nil }

    /// `{"jsonrpc":"2.0","id":..,"method":..,"params":..,"meta":..}`, absent members omitted.
    public func append(to buffer: inout [UInt8]) {
        appendMembers(to: &buffer)
        if let meta {
            buffer.append(literal: #","meta":"#)
            meta.append(to: &buffer)
        }
        buffer.append(0x7D)
    }

    /// The request as a client sends it on: `meta` holds the end client and request id it is
    /// made for, with this sender's budget and token (the request's own `meta` is not written).
    public func append(to buffer: inout [UInt8], client: String?, requestID: RequestID?, budgetMilliseconds: Int64?, token: String?) {
        appendMembers(to: &buffer)
        buffer.appendGathering(
            capacity: Self.gatheredBytes,
            { Self.appendMetaAndEnd(client: client, requestID: requestID, budgetMilliseconds: budgetMilliseconds, token: token, to: &$0) },
            otherwise: { Self.appendMetaAndEnd(client: client, requestID: requestID, budgetMilliseconds: budgetMilliseconds, token: token, to: &$0) })
    }

    /// Room on the stack for the members around `params` (an id, a method, a `meta`).
    private static let gatheredBytes = 256

    /// Every member before `meta`, the object left open: the members before `params` gathered
    /// into one append, `params` (of any size) written to the buffer itself.
    private func appendMembers(to buffer: inout [UInt8]) {
        buffer.appendGathering(capacity: Self.gatheredBytes, { appendHead(to: &$0) }, otherwise: { appendHead(to: &$0) })
        if let params {
            buffer.append(literal: #","params":"#)
            params.append(to: &buffer)
        }
    }

    private func appendHead<Sink: ByteSink>(to buffer: inout Sink) {
        if let id {
            buffer.append(literal: #"{"jsonrpc":"2.0","id":"#)
            id.write(to: &buffer)
        } else {
            buffer.append(literal: #"{"jsonrpc":"2.0""#)
        }
        buffer.append(literal: #","method":"#)
        JSON.appendString(method, to: &buffer)
    }

    private static func appendMetaAndEnd<Sink: ByteSink>(
        client: String?, requestID: RequestID?, budgetMilliseconds: Int64?, token: String?, to buffer: inout Sink
    ) {
        buffer.append(literal: #","meta":"#)
        RequestMeta.append(client: client, requestID: requestID, budgetMilliseconds: budgetMilliseconds, token: token, to: &buffer)
        buffer.append(0x7D)
    }
}

/// A JSON-RPC 2.0 response: `{"jsonrpc":"2.0","id":..,"result":..}` or `..,"error":{..}}`.
public struct RPCResponse: Sendable, Equatable, LineEncodable {
    public var id: JSON
    public var outcome: Result<JSON, RPCError>

    public init(id: JSON, result: JSON) {
        self.id = id
        self.outcome = .success(result)
    }

    public init(id: JSON, error: RPCError) {
        self.id = id
        self.outcome = .failure(error)
    }

    public func append(to buffer: inout [UInt8]) {
        buffer.append(literal: #"{"jsonrpc":"2.0","id":"#)
        id.append(to: &buffer)
        switch outcome {
        case .success(let result):
            buffer.append(literal: #","result":"#)
            result.append(to: &buffer)
        case .failure(let error):
            buffer.append(literal: #","error":"#)
            error.json.append(to: &buffer)
        }
        buffer.append(0x7D)
    }

    /// Reads a response line: the common shape without the envelope's dictionary, any other
    /// through the general parser (`decode(_:)`), with the same answer either way.
    public static func decode(line: [UInt8], limits: JSONLimits) -> RPCResponse? {
        if let members = line.withUnsafeBufferPointer({ JSONParser.parseEnvelope($0, keys: JSONParser.responseMembers, limits: limits) }) {
            return decode(jsonrpc: members[0], id: members[1], result: members[2], error: members[3])
        }
        return decodeInGeneral(line: line, limits: limits)
    }

    /// The general path alone, for tests and the fuzz target to compare with `decode(line:limits:)`.
    public static func decodeInGeneral(line: [UInt8], limits: JSONLimits) -> RPCResponse? {
        (try? JSONParser.parse(line, limits: limits)).flatMap(decode)
    }

    /// Reads a response object; nil unless it has `jsonrpc:"2.0"`, a valid `id` and exactly one of
    /// `result` or a well-formed `error`.
    public static func decode(_ json: JSON) -> RPCResponse? {
        guard case .object(let members) = json else { return nil }
        return decode(jsonrpc: members["jsonrpc"], id: members["id"], result: members["result"], error: members["error"])
    }

    private static func decode(jsonrpc: JSON?, id: JSON?, result: JSON?, error: JSON?) -> RPCResponse? {
        guard jsonrpc == .string("2.0"), let id, RPCDecoder.isValidID(id) else { return nil }
        switch (result, error) {
        case (let result?, nil):
            return RPCResponse(id: id, result: result)
        case (nil, let error?):
            guard let decoded = RPCError.decode(error) else { return nil }
            return RPCResponse(id: id, error: decoded)
        default:
            return nil
        }
    }
}

/// The members of a request object that the rules read (others are ignored).
struct RequestEnvelope {
    var jsonrpc: JSON?
    var id: JSON?
    var method: JSON?
    var params: JSON?
    var meta: RequestMeta?

    init(jsonrpc: JSON?, id: JSON?, method: JSON?, params: JSON?, meta: RequestMeta?) {
        (self.jsonrpc, self.id, self.method, self.params, self.meta) = (jsonrpc, id, method, params, meta)
    }

    /// From `JSONParser.parseRequestEnvelope`.
    init(_ read: EnvelopeRead) {
        let members = read.values
        self.init(jsonrpc: members[0], id: members[1], method: members[2], params: members[3], meta: read.meta)
    }
}

/// One member of a request line: a well-formed request, or the error answer for a malformed one.
public enum RPCEntry: Sendable, Equatable {
    case request(RPCRequest)
    case invalid(RPCResponse)
}

/// What one line decoded to.
public enum RPCMessage: Sendable, Equatable {
    case single(RPCEntry)
    case batch([RPCEntry])
    /// The whole line is refused (parse error, empty or oversized batch): send this answer alone.
    case failure(RPCResponse)
}

public enum RPCDecoder {
    public static func decode(line: [UInt8], limits: JSONLimits = .default, maxBatch: Int = 100) -> RPCMessage {
        line.withUnsafeBufferPointer { decode(line: $0, limits: limits, maxBatch: maxBatch) }
    }

    /// The line server's call: the line where the framer holds it.
    public static func decode(line: UnsafeBufferPointer<UInt8>, limits: JSONLimits = .default, maxBatch: Int = 100) -> RPCMessage {
        if let single = decodeSingle(line: line, limits: limits) { return .single(single) }
        return decodeInGeneral(line: line, limits: limits, maxBatch: maxBatch)
    }

    /// The common line (one request object with only the JSON-RPC members), read without the
    /// envelope's dictionary and without wrapping it in an `RPCMessage`; nil for any other line,
    /// which `decode(line:limits:maxBatch:)` reads.
    public static func decodeSingle(line: UnsafeBufferPointer<UInt8>, limits: JSONLimits = .default) -> RPCEntry? {
        JSONParser.parseRequestEnvelope(line, limits: limits).map { entry(RequestEnvelope($0)) }
    }

    public static func decode(line: some Collection<UInt8>, limits: JSONLimits = .default, maxBatch: Int = 100)
        -> RPCMessage
    {
        if let read = line.withContiguousStorageIfAvailable({ JSONParser.parseRequestEnvelope($0, limits: limits) }) ?? nil {
            return .single(entry(RequestEnvelope(read)))
        }
        return decodeInGeneral(line: line, limits: limits, maxBatch: maxBatch)
    }

    /// The general path alone: the whole line parsed to a `JSON` value, then classified. What the
    /// fast path must agree with (tests and the fuzz target compare the two).
    public static func decodeInGeneral(line: some Collection<UInt8>, limits: JSONLimits = .default, maxBatch: Int = 100) -> RPCMessage {
        do throws(JSONParseError) {
            return decode(json: try JSONParser.parse(line, limits: limits), maxBatch: maxBatch)
        } catch {
            return .failure(RPCResponse(id: .null, error: .parseError("parse error: \(error.description)")))
        }
    }

    /// Classifies an already parsed line.
    public static func decode(json: JSON, maxBatch: Int = 100) -> RPCMessage {
        guard case .array(let elements) = json else { return .single(entry(json)) }
        if elements.isEmpty {
            return .failure(RPCResponse(id: .null, error: .invalidRequest("invalid request: empty batch")))
        }
        if elements.count > maxBatch {
            return .failure(
                RPCResponse(
                    id: .null,
                    error: .invalidRequest("invalid request: batch larger than \(maxBatch) requests")))
        }
        return .batch(elements.map(entry))
    }

    /// Validates one request object.
    public static func entry(_ json: JSON) -> RPCEntry {
        guard case .object(let members) = json else { return invalid(id: .null, "request must be an object") }
        return entry(
            RequestEnvelope(
                jsonrpc: members["jsonrpc"], id: members["id"], method: members["method"], params: members["params"],
                meta: members["meta"]?.objectValue.map(RequestMeta.init(members:))))
    }

    /// The rules of a request, whichever way its members were read (other members are ignored).
    static func entry(_ envelope: RequestEnvelope) -> RPCEntry {
        let id = envelope.id
        let echoedID = id.flatMap { isValidID($0) ? $0 : nil } ?? .null
        if let id, !isValidID(id) {
            return invalid(id: .null, "id must be a string, a number or null")
        }
        guard envelope.jsonrpc == .string("2.0") else { return invalid(id: echoedID, "jsonrpc must be \"2.0\"") }
        guard case .string(let method)? = envelope.method else {
            return invalid(id: echoedID, "method must be a string")
        }
        let params = envelope.params
        switch params {
        case nil, .object?, .array?: break
        default: return invalid(id: echoedID, "params must be an object or an array")
        }
        return .request(RPCRequest(method: method, params: params, id: id, meta: envelope.meta))
    }

    static func isValidID(_ id: JSON) -> Bool {
        switch id {
        case .string, .int, .double, .null: true
        case .bool, .array, .object: false
        }
    }

    private static func invalid(id: JSON, _ message: String) -> RPCEntry {
        .invalid(RPCResponse(id: id, error: .invalidRequest("invalid request: " + message)))
    }
}

/// Gathers the answers to one batch and produces the batch line when the last one arrives.
/// A batch of only notifications expects 0 answers and never produces a line.
public struct BatchCollector: Sendable {
    public let expectedCount: Int
    public private(set) var receivedCount = 0
    private var buffer: [UInt8] = [0x5B]

    public init(expecting count: Int) {
        precondition(count >= 0, "a batch cannot expect a negative number of answers")
        self.expectedCount = count
    }

    public var isComplete: Bool { receivedCount == expectedCount }

    /// Adds one answer; returns the encoded array (no trailing newline) once all have arrived.
    public mutating func add(_ response: RPCResponse) -> [UInt8]? {
        add { response.append(to: &$0) }
    }

    /// Adds the answer `reply` for `id` (a result passed through is written as it came).
    public mutating func add(id: JSON, reply: RPCReply) -> [UInt8]? {
        add { reply.append(id: id, to: &$0) }
    }

    private mutating func add(appending answer: (inout [UInt8]) -> Void) -> [UInt8]? {
        precondition(receivedCount < expectedCount, "more answers than requests in a batch")
        if receivedCount > 0 { buffer.append(0x2C) }
        answer(&buffer)
        receivedCount += 1
        guard receivedCount == expectedCount else { return nil }
        buffer.append(0x5D)
        return buffer
    }
}
