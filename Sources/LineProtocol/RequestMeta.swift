/// A request's `meta` member, which only Latchkey processes send one another: the end client's
/// address, the request's id, how long the caller waits, and the service token. Held as named
/// fields, so a hop between services builds and hashes no dictionary for it. A member it does not
/// know, or a known one of another type, is ignored, as a caller's stray member always was.
/// A class, immutable: a request carrying one stays small to copy.
public final class RequestMeta: Sendable, Equatable {
    public let client: String?
    public let requestID: RequestID?
    /// How long the caller waits for the answer, in milliseconds (relative: clocks of two processes do not compare).
    public let budgetMilliseconds: Int64?
    /// The service token (`--service-token`).
    public let token: String?

    public init(client: String? = nil, requestID: RequestID? = nil, budgetMilliseconds: Int64? = nil, token: String? = nil) {
        self.client = client
        self.requestID = requestID
        self.budgetMilliseconds = budgetMilliseconds
        self.token = token
    }

    public static func == (left: RequestMeta, right: RequestMeta) -> Bool {
        (left.client, left.requestID, left.budgetMilliseconds, left.token) == (right.client, right.requestID, right.budgetMilliseconds, right.token)
    }

    /// The member names, by slot.
    static let members = EnvelopeKeys(["client", "request_id", "budget_ms", "token"])

    /// From its members by slot (`members`' order), each kept when it has its type.
    convenience init(_ values: EnvelopeValues) {
        self.init(
            client: values[0]?.stringValue, requestID: values[1]?.stringValue.map(RequestID.init), budgetMilliseconds: values[2]?.intValue,
            token: values[3]?.stringValue)
    }

    /// From a parsed `meta` object (a line read the general way).
    convenience init(members: [String: JSON]) {
        var values = EnvelopeValues()
        for (slot, name) in Self.members.names.enumerated() { values[slot] = members[name] }
        self.init(values)
    }

    /// `{"client":..,"request_id":..,"budget_ms":..,"token":..}`, absent members omitted.
    func append(to buffer: inout [UInt8]) {
        Self.append(client: client, requestID: requestID, budgetMilliseconds: budgetMilliseconds, token: token, to: &buffer)
    }

    /// The same members from wherever they are held: a client sending a call on writes its
    /// caller's client and request id with its own budget and token, and builds no meta for it.
    static func append<Sink: ByteSink>(client: String?, requestID: RequestID?, budgetMilliseconds: Int64?, token: String?, to buffer: inout Sink) {
        // Each name is one literal with what comes before it (a brace first, a comma after).
        var first = true
        func name(_ opening: StaticString, _ following: StaticString) {
            buffer.append(literal: first ? opening : following)
            first = false
        }
        if let requestID, requestID.appendMetaOpening(client: client, to: &buffer) {
            first = false
        } else {
            if let client {
                name(#"{"client":"#, #","client":"#)
                JSON.appendString(client, to: &buffer)
            }
            if let requestID {
                name(#"{"request_id":"#, #","request_id":"#)
                requestID.append(to: &buffer)
            }
        }
        if let budgetMilliseconds {
            name(#"{"budget_ms":"#, #","budget_ms":"#)
            JSON.appendInteger(budgetMilliseconds, to: &buffer)
        }
        if let token {
            name(#"{"token":"#, #","token":"#)
            JSON.appendString(token, to: &buffer)
        }
        if first { buffer.append(ASCII.openBrace) }
        buffer.append(ASCII.closeBrace)
    }
}
