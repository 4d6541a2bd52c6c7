/// The members of a JSON-RPC envelope (a request or a response), read straight from the line
/// without building the envelope's dictionary. Only for the common shape: one object whose keys
/// are among the expected ones, each once; anything else (and every error) is nil, so the caller
/// parses the line the general way and gives the general answer, byte for byte.
extension JSONParser {
    static let requestMembers = EnvelopeKeys(["jsonrpc", "id", "method", "params", "meta"])
    static let requestMetaSlot = 4
    static let responseMembers = EnvelopeKeys(["jsonrpc", "id", "result", "error"])

    /// The values of `keys`, in their order (nil where absent), or nil for any other line.
    static func parseEnvelope(_ bytes: UnsafeBufferPointer<UInt8>, keys: EnvelopeKeys, limits: JSONLimits) -> EnvelopeValues? {
        guard bytes.count <= limits.maxBytes, limits.maxDepth >= 1 else { return nil }
        var parser = Parser(bytes: bytes, limits: limits)
        return parser.parseEnvelope(keys: keys)?.values
    }

    /// A request's members, its `meta` read into its fields (see `Parser.parseMeta`).
    static func parseRequestEnvelope(_ bytes: UnsafeBufferPointer<UInt8>, limits: JSONLimits) -> EnvelopeRead? {
        guard bytes.count <= limits.maxBytes, limits.maxDepth >= 1 else { return nil }
        var parser = Parser(bytes: bytes, limits: limits)
        return parser.parseEnvelope(keys: requestMembers, metaSlot: requestMetaSlot)
    }

    /// The same, with the member `keys[rawSlot]` checked but not built: its byte range when
    /// present (nil values stand for it).
    static func parseEnvelope(_ bytes: UnsafeBufferPointer<UInt8>, keys: EnvelopeKeys, rawSlot: Int, limits: JSONLimits) -> EnvelopeRead? {
        guard bytes.count <= limits.maxBytes, limits.maxDepth >= 1 else { return nil }
        var parser = Parser(bytes: bytes, limits: limits)
        return parser.parseEnvelope(keys: keys, rawSlot: rawSlot)
    }
}

/// An envelope as `Parser.parseEnvelope` read it: handed on whole, since copying its values
/// into a smaller tuple costs a retain and a release of each. A struct, not a tuple: an optional
/// tuple is copied and destroyed through the runtime's generic witnesses, a struct by code of its own.
struct EnvelopeRead {
    var values: EnvelopeValues
    var raw: Range<Int>?
    var meta: RequestMeta?
}

/// The member names an envelope may have, by slot, also as bytes: a name spelled plainly is
/// matched where it lies in the line, without building a string.
struct EnvelopeKeys {
    let names: [String]
    let utf8: [[UInt8]]
    /// The slot of `jsonrpc`, whose value on every line is `"2.0"`.
    let versionSlot: Int?

    init(_ names: [String]) {
        self.names = names
        utf8 = names.map { Array($0.utf8) }
        versionSlot = names.firstIndex(of: "jsonrpc")
    }
}

/// The values of an envelope's members by slot, nil where absent: held inline, so reading a line's
/// envelope allocates no array (a request has five members, a response four).
struct EnvelopeValues {
    static let capacity = 5
    // Five fields, not a tuple: a tuple of optionals is copied and destroyed through the
    // runtime's generic witnesses, fields by code the compiler writes for this type.
    private var slot0: JSON?
    private var slot1: JSON?
    private var slot2: JSON?
    private var slot3: JSON?
    private var slot4: JSON?

    subscript(slot: Int) -> JSON? {
        get {
            switch slot {
            case 0: return slot0
            case 1: return slot1
            case 2: return slot2
            case 3: return slot3
            default: return slot4
            }
        }
        set {
            switch slot {
            case 0: slot0 = newValue
            case 1: slot1 = newValue
            case 2: slot2 = newValue
            case 3: slot3 = newValue
            default: slot4 = newValue
            }
        }
    }
}

/// Reading an envelope's members where they lie in the line.
extension Parser {
    /// See `JSONParser.parseEnvelope`. Strings, values and depth are checked by the same code as
    /// `parseDocument`. The member at `rawSlot`, if any, is checked without being built
    /// (`skipValue`) and handed back as its byte range; it must be compact, or the line goes the
    /// general way (which re-encodes it). The member at `metaSlot`, if any, is read by `parseMeta`
    /// (nil values stand for it too).
    mutating func parseEnvelope(keys: EnvelopeKeys, rawSlot: Int? = nil, metaSlot: Int? = nil) -> EnvelopeRead? {
        precondition(keys.names.count <= EnvelopeValues.capacity, "an envelope has at most \(EnvelopeValues.capacity) members")
        var values = EnvelopeValues()
        var raw: Range<Int>?
        var meta: RequestMeta?
        skipWhitespace()
        let read = walkKnownMembers(keys) { parser, slot in
            if slot == metaSlot {
                parser.skipWhitespace()
                meta = parser.parseMeta(depth: 1)
                return meta != nil
            }
            if slot == rawSlot {
                parser.skipWhitespace()
                parser.skippedWhitespace = false
                let start = parser.position
                guard (try? parser.skipValue(depth: 1)) != nil, !parser.skippedWhitespace else { return false }
                raw = start..<parser.position
                return true
            }
            if slot == keys.versionSlot {
                // Every line's `"2.0"`, matched whole: no string built for it. Any other value,
                // spaced or escaped, is read below like every other one.
                parser.skipWhitespace()
                if parser.expect(#""2.0""#) {
                    values[slot] = .string("2.0")
                    return true
                }
            }
            guard let value = try? parser.parseValue(depth: 1) else { return false }
            values[slot] = value
            return true
        }
        guard read else { return nil }
        skipWhitespace()
        return position == bytes.count ? EnvelopeRead(values: values, raw: raw, meta: meta) : nil
    }

    /// A `meta` object (its `{` at `position`, at `depth` as `parseValue` would be given it) read
    /// straight into its fields: a string member by `parseString`, any other value by `parseValue`
    /// (kept only for `budget_ms` when an integer, as `RequestMeta(_:)` keeps it); nil for any
    /// object with another member, so the line goes the general way. Every hop between services
    /// carries one.
    mutating func parseMeta(depth: Int) -> RequestMeta? {
        guard depth < limits.maxDepth else { return nil }
        if let meta = parseWrittenMeta() { return meta }
        var client: String?
        var requestID: String?
        var token: String?
        var budget: Int64?
        let read = walkKnownMembers(RequestMeta.members) { parser, slot in
            parser.skipWhitespace()
            if parser.position < parser.bytes.count, parser.bytes[parser.position] == ASCII.quote {
                guard let text = try? parser.parseString() else { return false }
                switch slot {
                case 0: client = text
                case 1: requestID = text
                case 3: token = text
                default: break  // budget_ms of another type: ignored
                }
                return true
            }
            guard let value = try? parser.parseValue(depth: depth + 1) else { return false }
            if slot == 2, case .int(let milliseconds) = value { budget = milliseconds }
            return true
        }
        guard read else { return nil }
        return RequestMeta(client: client, requestID: requestID.map(RequestID.init), budgetMilliseconds: budget, token: token)
    }

    /// `meta` in the shape `RequestMeta.append` writes, members in slot order and compact, the
    /// budget a plain integer: each member's opening matched whole (no name read), its string by
    /// `parseString`. Nil, with `position` unmoved, for any other shape, which `parseMeta` reads
    /// member by member (and refuses, or ignores, as it always has).
    private mutating func parseWrittenMeta() -> RequestMeta? {
        let start = position
        var first = true
        func opening(_ alone: StaticString, _ following: StaticString) -> Bool {
            guard expect(first ? alone : following) else { return false }
            first = false
            return true
        }
        func string(_ target: inout String?) -> Bool {
            guard position < bytes.count, bytes[position] == ASCII.quote, let text = try? parseString() else { return false }
            target = text
            return true
        }
        var client: String?
        var requestID: String?
        var budget: Int64?
        var token: String?
        var shaped = true
        if opening(#"{"client":"#, #","client":"#) { shaped = string(&client) }
        if shaped, opening(#"{"request_id":"#, #","request_id":"#) { shaped = string(&requestID) }
        if shaped, opening(#"{"budget_ms":"#, #","budget_ms":"#) {
            budget = position < bytes.count ? plainInteger() : nil
            shaped = budget != nil
        }
        if shaped, opening(#"{"token":"#, #","token":"#) { shaped = string(&token) }
        guard shaped, first ? expect("{}") : expect("}") else {
            position = start
            return nil
        }
        return RequestMeta(client: client, requestID: requestID.map(RequestID.init), budgetMilliseconds: budget, token: token)
    }

    /// An object whose every member is one of `keys`, each once (its `{` at `position`): `member`
    /// reads each value where it starts, at its slot, and answers false to give up. False for any
    /// other object and on any error, for the general path to answer; `walkObject` is the grammar
    /// the general path reads.
    @inline(__always)
    mutating func walkKnownMembers(_ keys: EnvelopeKeys, _ member: (inout Parser, Int) -> Bool) -> Bool {
        guard position < bytes.count, bytes[position] == ASCII.openBrace else { return false }
        position += 1
        skipWhitespace()
        if position < bytes.count, bytes[position] == ASCII.closeBrace {
            position += 1
            return true
        }
        var seen = 0
        // Latchkey's encoders write members in slot order: the slot after the last one read is
        // tried first, with one comparison, before every name is.
        var expected = 0
        while true {
            skipWhitespace()
            guard position < bytes.count, bytes[position] == ASCII.quote else { return false }
            // Another member (plain or not), or one twice: the general path answers.
            guard let slot = expectedKeySlot(keys, expected) ?? plainKeySlot(keys) ?? (try? parseString()).flatMap(keys.names.firstIndex(of:)),
                seen & (1 << slot) == 0
            else {
                return false
            }
            seen |= 1 << slot
            expected = slot + 1
            skipWhitespace()
            guard position < bytes.count, bytes[position] == ASCII.colon else { return false }
            position += 1
            guard member(&self, slot) else { return false }
            skipWhitespace()
            guard position < bytes.count else { return false }
            if bytes[position] == ASCII.comma {
                position += 1
            } else if bytes[position] == ASCII.closeBrace {
                position += 1
                return true
            } else {
                return false
            }
        }
    }

    /// `slot` when the name at `position` (its opening quote) is exactly `keys`' name at `slot`
    /// followed by its closing quote, with `position` moved past it; nil otherwise, unmoved.
    /// A name that matches here is one `plainKeySlot` would match: printable ASCII, no escape.
    mutating func expectedKeySlot(_ keys: EnvelopeKeys, _ slot: Int) -> Int? {
        guard slot < keys.utf8.count else { return nil }
        let name = keys.utf8[slot]
        let end = position + 1 + name.count
        guard name.count <= limits.maxStringBytes, end < bytes.count, bytes[end] == ASCII.quote,
            name.withUnsafeBufferPointer({ hasBytes($0, at: position + 1) })
        else { return nil }
        position = end + 1
        return slot
    }

    /// The slot of the member name at `position` (its opening quote) when it is one of `keys`
    /// spelled plainly (printable ASCII, no escape), with `position` moved past it. Nil for any
    /// other name, `position` unmoved, for `parseString` to read and judge the long way.
    mutating func plainKeySlot(_ keys: EnvelopeKeys) -> Int? {
        let start = position + 1
        let end = PlainRun.end(in: bytes, from: start, stoppingAtNonASCII: true)
        guard end < bytes.count, bytes[end] == ASCII.quote else { return nil }
        for slot in keys.utf8.indices where keys.utf8[slot].count == end - start {
            if let matched = expectedKeySlot(keys, slot) { return matched }
        }
        return nil
    }
}
