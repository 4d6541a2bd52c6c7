/// What a dispatcher answers one request with: a value or an error to encode, or a result
/// already encoded (a service's answer the gateway passes through as it came).
public enum RPCReply: Sendable, Equatable {
    case outcome(Result<JSON, RPCError>)
    case encodedResult(RawJSON)

    public var failure: RPCError? {
        if case .outcome(.failure(let error)) = self { return error }
        return nil
    }

    /// The answer line for `id` (no newline): `{"jsonrpc":"2.0","id":..,"result":..}` or `..,"error":..}`.
    public func append(id: JSON, to buffer: inout [UInt8]) {
        switch self {
        case .outcome(.success(let result)):
            RPCResponse(id: id, result: result).append(to: &buffer)
        case .outcome(.failure(let error)):
            RPCResponse(id: id, error: error).append(to: &buffer)
        case .encodedResult(let result):
            buffer.appendGathering(capacity: 256, { Self.appendResultHead(id: id, to: &$0) }, otherwise: { Self.appendResultHead(id: id, to: &$0) })
            buffer.append(contentsOf: result.bytes)
            buffer.append(0x7D)
        }
    }

    /// An answer's members before its result, gathered into one append.
    private static func appendResultHead<Sink: ByteSink>(id: JSON, to buffer: inout Sink) {
        buffer.append(literal: #"{"jsonrpc":"2.0","id":"#)
        id.write(to: &buffer)
        buffer.append(literal: #","result":"#)
    }
}
