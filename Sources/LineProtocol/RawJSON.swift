/// One JSON value as bytes, checked by every rule of `JSONParser` and compact (no whitespace
/// between tokens, so it never spans lines): how the gateway passes a service's `result` on to
/// its client without building a `JSON` value and encoding it again.
public struct RawJSON: Sendable, Equatable {
    public let bytes: ArraySlice<UInt8>

    /// Bytes already checked (`Parser.skipValue`, compact) or written by the encoder.
    init(checked bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
    }

    /// The encoding of `value`.
    public init(_ value: JSON) {
        bytes = value.encoded()[...]
    }

    /// `bytes` when they are one compact JSON value the parser accepts under `limits`; nil otherwise.
    public init?(validating bytes: ArraySlice<UInt8>, limits: JSONLimits = .default) {
        guard bytes.count <= limits.maxBytes else { return nil }
        let valid = bytes.withUnsafeBufferPointer { buffer in
            var parser = Parser(bytes: buffer, limits: limits)
            guard (try? parser.skipValue(depth: 0)) != nil else { return false }
            return !parser.skippedWhitespace && parser.position == buffer.count
        }
        guard valid else { return nil }
        self.bytes = bytes
    }

    /// The value, for the places that must look inside (a session check, the HTTP door).
    public func decoded() -> JSON {
        // Checked under the limits of the line it came in; reading it again needs none tighter.
        let unlimited = JSONLimits(maxDepth: .max, maxBytes: .max, maxStringBytes: .max)
        do throws(JSONParseError) {
            return try JSONParser.parse(bytes, limits: unlimited)
        } catch {
            preconditionFailure("a checked JSON value no longer parses: \(error)")
        }
    }
}

/// An answer line read for passing on (the gateway reading a service's answer): a `result`
/// kept as the service's own bytes, checked but not built; an `error` decoded, since its reason
/// is read (metrics, the access log, session checks).
public struct RawResponse: Sendable, Equatable {
    public let id: JSON
    public let outcome: Result<RawJSON, RPCError>

    public init(id: JSON, outcome: Result<RawJSON, RPCError>) {
        self.id = id
        self.outcome = outcome
    }

    /// nil for exactly the lines `RPCResponse.decode(line:limits:)` refuses. A compact result in
    /// an envelope of the common shape is kept as it came; any other is decoded and encoded again.
    public static func decode(line: [UInt8], limits: JSONLimits) -> RawResponse? {
        decode(line: line[...], limits: limits)
    }

    /// The same for a line that is a slice of a larger buffer (`LineFramer.nextShared()`): a
    /// result kept as bytes shares that buffer's storage.
    public static func decode(line: ArraySlice<UInt8>, limits: JSONLimits) -> RawResponse? {
        // The parser counts from the slice's start; the slice is indexed from its place in the buffer.
        func kept(_ range: Range<Int>) -> RawJSON {
            RawJSON(checked: line[(range.lowerBound + line.startIndex)..<(range.upperBound + line.startIndex)])
        }
        let answer = line.withUnsafeBufferPointer { bytes in
            var parser = Parser(bytes: bytes, limits: limits)
            return parser.readResultAnswer()
        }
        if let answer { return RawResponse(id: .int(answer.id), outcome: .success(kept(answer.result))) }
        let envelope = line.withUnsafeBufferPointer {
            JSONParser.parseEnvelope($0, keys: JSONParser.responseMembers, rawSlot: resultSlot, limits: limits)
        }
        guard let envelope else { return decodeInGeneral(line: Array(line), limits: limits) }
        let (members, result) = (envelope.values, envelope.raw)
        guard members[0] == .string("2.0"), let id = members[1], RPCDecoder.isValidID(id) else { return nil }
        switch (result, members[3]) {
        case (let result?, nil):
            return RawResponse(id: id, outcome: .success(kept(result)))
        case (nil, let error?):
            guard let decoded = RPCError.decode(error) else { return nil }
            return RawResponse(id: id, outcome: .failure(decoded))
        default:
            return nil
        }
    }

    /// The general path alone (the whole line parsed, the result encoded again), for tests and
    /// the fuzz target to compare with `decode(line:limits:)`.
    public static func decodeInGeneral(line: [UInt8], limits: JSONLimits) -> RawResponse? {
        RPCResponse.decodeInGeneral(line: line, limits: limits).map { RawResponse(id: $0.id, outcome: $0.outcome.map(RawJSON.init)) }
    }

    /// `result` in `JSONParser.responseMembers`.
    private static let resultSlot = 2
}
