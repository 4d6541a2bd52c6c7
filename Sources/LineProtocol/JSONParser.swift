#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#endif

/// Limits applied while parsing untrusted input. Each one turns into a `JSONParseError`.
public struct JSONLimits: Sendable, Equatable {
    /// Deepest nesting of arrays and objects accepted (`[[1]]` has depth 2).
    public var maxDepth: Int
    /// Longest input accepted, in bytes.
    public var maxBytes: Int
    /// Longest single string (object keys included) accepted, in bytes of decoded UTF-8.
    public var maxStringBytes: Int

    public init(maxDepth: Int = 64, maxBytes: Int = 64 * 1024, maxStringBytes: Int = 64 * 1024) {
        precondition(maxDepth >= 0 && maxBytes >= 0 && maxStringBytes >= 0, "JSON limits must not be negative")
        self.maxDepth = maxDepth
        self.maxBytes = maxBytes
        self.maxStringBytes = maxStringBytes
    }

    public static let `default` = JSONLimits()
}

/// Why input was refused. `message` is a constant description and never contains input bytes
/// (the input may hold a secret); `offset` is the byte position where the problem was found.
public struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
    public let message: String
    public let offset: Int

    public init(message: String, offset: Int) {
        self.message = message
        self.offset = offset
    }

    public var description: String { "\(message) at byte \(offset)" }
}

/// Strict RFC 8259 parser working directly on UTF-8 bytes.
public enum JSONParser {
    public static func parse(_ bytes: [UInt8], limits: JSONLimits = .default) throws(JSONParseError) -> JSON {
        try checkSize(bytes.count, limits)
        let result = bytes.withUnsafeBufferPointer { buffer in
            var parser = Parser(bytes: buffer, limits: limits)
            return parser.parseDocument()
        }
        return try result.get()
    }

    public static func parse(_ bytes: ArraySlice<UInt8>, limits: JSONLimits = .default) throws(JSONParseError) -> JSON {
        try checkSize(bytes.count, limits)
        let result = bytes.withUnsafeBufferPointer { buffer in
            var parser = Parser(bytes: buffer, limits: limits)
            return parser.parseDocument()
        }
        return try result.get()
    }

    public static func parse<Bytes: Collection>(
        _ bytes: Bytes, limits: JSONLimits = .default
    ) throws(JSONParseError) -> JSON where Bytes.Element == UInt8 {
        try checkSize(bytes.count, limits)
        let contiguous = bytes.withContiguousStorageIfAvailable { buffer in
            var parser = Parser(bytes: buffer, limits: limits)
            return parser.parseDocument()
        }
        if let contiguous { return try contiguous.get() }
        return try parse(Array(bytes), limits: limits)
    }

    public static func parse(_ text: String, limits: JSONLimits = .default) throws(JSONParseError) -> JSON {
        try parse(Array(text.utf8), limits: limits)
    }

    private static func checkSize(_ count: Int, _ limits: JSONLimits) throws(JSONParseError) {
        if count > limits.maxBytes {
            throw JSONParseError(message: "input longer than the byte limit", offset: limits.maxBytes)
        }
    }
}

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

enum ASCII {
    static let quote: UInt8 = 0x22
    static let backslash: UInt8 = 0x5C
    static let slash: UInt8 = 0x2F
    static let comma: UInt8 = 0x2C
    static let colon: UInt8 = 0x3A
    static let openBracket: UInt8 = 0x5B
    static let closeBracket: UInt8 = 0x5D
    static let openBrace: UInt8 = 0x7B
    static let closeBrace: UInt8 = 0x7D
    static let minus: UInt8 = 0x2D
    static let plus: UInt8 = 0x2B
    static let dot: UInt8 = 0x2E
    static let zero: UInt8 = 0x30
    static let nine: UInt8 = 0x39
    static let lowerE: UInt8 = 0x65
    static let upperE: UInt8 = 0x45
}

struct Parser {
    let bytes: UnsafeBufferPointer<UInt8>
    let limits: JSONLimits
    var position = 0
    /// Set when `skipWhitespace` passes any: a value read for passing through must be compact.
    var skippedWhitespace = false

    init(bytes: UnsafeBufferPointer<UInt8>, limits: JSONLimits) {
        self.bytes = bytes
        self.limits = limits
    }

    mutating func parseDocument() -> Result<JSON, JSONParseError> {
        do throws(JSONParseError) {
            let value = try parseValue(depth: 0)
            skipWhitespace()
            if position != bytes.count { throw fail("unexpected data after the JSON value") }
            return .success(value)
        } catch {
            return .failure(error)
        }
    }

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

    /// Moves past `literal` when the bytes at `position` are exactly it.
    /// A long literal (an answer's heads: 22 bytes, then 10) by `memcmp`, where the byte loop
    /// takes about eight instructions a byte; a short one (`"2.0"`) by the loop.
    mutating func expect(_ literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        if count <= 8 {
            guard hasBytes(UnsafeBufferPointer(start: literal.utf8Start, count: count), at: position) else { return false }
        } else {
            guard bytes.count - position >= count, let line = bytes.baseAddress, memcmp(line + position, literal.utf8Start, count) == 0 else {
                return false
            }
        }
        position += count
        return true
    }

    /// True when the line holds exactly `expected` from `offset` on. A byte loop: `elementsEqual`
    /// goes through the generic sequence iterators.
    func hasBytes(_ expected: UnsafeBufferPointer<UInt8>, at offset: Int) -> Bool {
        guard bytes.count - offset >= expected.count else { return false }
        for index in 0..<expected.count where bytes[offset + index] != expected[index] { return false }
        return true
    }

    func fail(_ message: String) -> JSONParseError {
        JSONParseError(message: message, offset: position)
    }

    mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x09, 0x0A, 0x0D:
                position += 1
                skippedWhitespace = true
            default: return
            }
        }
    }

    private mutating func parseValue(depth: Int) throws(JSONParseError) -> JSON {
        skipWhitespace()
        guard position < bytes.count else { throw fail("unexpected end of input") }
        switch bytes[position] {
        case ASCII.openBrace:
            if depth >= limits.maxDepth { throw fail("nesting deeper than the depth limit") }
            return try parseObject(depth: depth + 1)
        case ASCII.openBracket:
            if depth >= limits.maxDepth { throw fail("nesting deeper than the depth limit") }
            return try parseArray(depth: depth + 1)
        case ASCII.quote:
            return .string(try parseString())
        case 0x74:  // t
            try expectLiteral("true")
            return .bool(true)
        case 0x66:  // f
            try expectLiteral("false")
            return .bool(false)
        case 0x6E:  // n
            try expectLiteral("null")
            return .null
        case ASCII.minus, ASCII.zero...ASCII.nine:
            return try parseNumber()
        default:
            throw fail("unexpected character")
        }
    }

    mutating func expectLiteral(_ literal: StaticString) throws(JSONParseError) {
        let count = literal.utf8CodeUnitCount
        guard bytes.count - position >= count else { throw fail("invalid literal") }
        let expected = UnsafeBufferPointer(start: literal.utf8Start, count: count)
        for index in 0..<count where bytes[position + index] != expected[index] {
            throw fail("invalid literal")
        }
        position += count
    }

    private mutating func parseArray(depth: Int) throws(JSONParseError) -> JSON {
        var elements: [JSON] = []
        try walkArray { parser throws(JSONParseError) in elements.append(try parser.parseValue(depth: depth)) }
        return .array(elements)
    }

    private mutating func parseObject(depth: Int) throws(JSONParseError) -> JSON {
        var members: [String: JSON] = [:]
        try walkObject { parser, key, keyOffset throws(JSONParseError) in
            let value = try parser.parseValue(depth: depth)
            if members.updateValue(value, forKey: key) != nil {
                throw JSONParseError(message: "duplicate object key", offset: keyOffset)
            }
        }
        return .object(members)
    }

    /// An array's grammar, written once for the parser and the checker: `element` reads each
    /// value where it starts (`[` is at `position`).
    @inline(__always)
    mutating func walkArray(_ element: (inout Parser) throws(JSONParseError) -> Void) throws(JSONParseError) {
        position += 1  // [
        skipWhitespace()
        if position < bytes.count, bytes[position] == ASCII.closeBracket {
            position += 1
            return
        }
        while true {
            try element(&self)
            skipWhitespace()
            guard position < bytes.count else { throw fail("unterminated array") }
            switch bytes[position] {
            case ASCII.comma: position += 1
            case ASCII.closeBracket:
                position += 1
                return
            default: throw fail("expected ',' or ']' in array")
            }
        }
    }

    /// An object's grammar, written once for the parser and the checker: `member` gets each key
    /// (built: duplicates are judged by `String` equality in both) and its offset, and reads the
    /// value where it starts (`{` is at `position`).
    @inline(__always)
    mutating func walkObject(_ member: (inout Parser, String, Int) throws(JSONParseError) -> Void) throws(JSONParseError) {
        try walkObject(readingKeys: { parser throws(JSONParseError) in try parser.parseString() }, member)
    }

    /// The object grammar, each key read by `readKey` (built, or only checked) with the quote it
    /// starts at.
    mutating func walkObject<Key>(
        readingKeys readKey: (inout Parser) throws(JSONParseError) -> Key, _ member: (inout Parser, Key, Int) throws(JSONParseError) -> Void
    ) throws(JSONParseError) {
        position += 1  // {
        skipWhitespace()
        if position < bytes.count, bytes[position] == ASCII.closeBrace {
            position += 1
            return
        }
        while true {
            skipWhitespace()
            guard position < bytes.count, bytes[position] == ASCII.quote else {
                throw fail("expected a string key in object")
            }
            let keyOffset = position
            let key = try readKey(&self)
            skipWhitespace()
            guard position < bytes.count, bytes[position] == ASCII.colon else { throw fail("expected ':' in object") }
            position += 1
            try member(&self, key, keyOffset)
            skipWhitespace()
            guard position < bytes.count else { throw fail("unterminated object") }
            switch bytes[position] {
            case ASCII.comma: position += 1
            case ASCII.closeBrace:
                position += 1
                return
            default: throw fail("expected ',' or '}' in object")
            }
        }
    }

    // MARK: Strings

    mutating func parseString() throws(JSONParseError) -> String {
        position += 1  // opening quote
        let contentStart = position
        // Fast path: no escapes, so the string is a slice of the input.
        while position < bytes.count {
            position = PlainRun.end(in: bytes, from: position, stoppingAtNonASCII: true)
            guard position < bytes.count else { break }
            let byte = bytes[position]
            if byte == ASCII.quote {
                let count = position - contentStart
                if count > limits.maxStringBytes { throw fail("string longer than the string limit") }
                let content = UnsafeBufferPointer(rebasing: bytes[contentStart..<position])
                position += 1
                return String(decoding: content, as: UTF8.self)
            }
            if byte == ASCII.backslash { break }
            if byte < 0x20 { throw fail("unescaped control character in string") }
            if byte < 0x80 {
                position += 1
            } else {
                position = try validateUTF8Sequence(at: position)
            }
        }
        guard position < bytes.count else { throw fail("unterminated string") }
        var scratch: [UInt8] = []
        scratch.reserveCapacity(position - contentStart + 16)
        scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[contentStart..<position]))
        while position < bytes.count {
            let byte = bytes[position]
            if byte == ASCII.quote {
                if scratch.count > limits.maxStringBytes { throw fail("string longer than the string limit") }
                position += 1
                return String(decoding: scratch, as: UTF8.self)
            } else if byte == ASCII.backslash {
                try parseEscape(into: &scratch)
            } else if byte < 0x20 {
                throw fail("unescaped control character in string")
            } else if byte < 0x80 {
                scratch.append(byte)
                position += 1
            } else {
                let end = try validateUTF8Sequence(at: position)
                scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[position..<end]))
                position = end
            }
        }
        throw fail("unterminated string")
    }

    /// Validates one multi-byte UTF-8 sequence starting at `start` (Unicode table 3-7: no overlong
    /// forms, no surrogates, nothing above U+10FFFF) and returns the index just after it.
    func validateUTF8Sequence(at start: Int) throws(JSONParseError) -> Int {
        let lead = bytes[start]
        let length: Int
        var secondLow: UInt8 = 0x80
        var secondHigh: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; secondLow = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; secondHigh = 0x9F
        case 0xF0: length = 4; secondLow = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; secondHigh = 0x8F
        default: throw JSONParseError(message: "invalid UTF-8", offset: start)
        }
        guard bytes.count - start >= length else { throw JSONParseError(message: "invalid UTF-8", offset: start) }
        let second = bytes[start + 1]
        guard second >= secondLow && second <= secondHigh else {
            throw JSONParseError(message: "invalid UTF-8", offset: start)
        }
        for index in (start + 2)..<(start + length) where bytes[index] & 0xC0 != 0x80 {
            throw JSONParseError(message: "invalid UTF-8", offset: start)
        }
        return start + length
    }

    mutating func parseEscape(into scratch: inout [UInt8]) throws(JSONParseError) {
        guard position + 1 < bytes.count else { throw fail("unterminated string") }
        let escaped = bytes[position + 1]
        switch escaped {
        case ASCII.quote, ASCII.backslash, ASCII.slash: scratch.append(escaped)
        case 0x62: scratch.append(0x08)  // b
        case 0x66: scratch.append(0x0C)  // f
        case 0x6E: scratch.append(0x0A)  // n
        case 0x72: scratch.append(0x0D)  // r
        case 0x74: scratch.append(0x09)  // t
        case 0x75:  // u
            let escapeOffset = position
            position += 2
            var scalar = try parseHex4()
            if (0xDC00...0xDFFF).contains(scalar) {
                throw JSONParseError(message: "lone low surrogate escape", offset: escapeOffset)
            }
            if (0xD800...0xDBFF).contains(scalar) {
                guard bytes.count - position >= 6, bytes[position] == ASCII.backslash, bytes[position + 1] == 0x75 else {
                    throw JSONParseError(message: "lone high surrogate escape", offset: escapeOffset)
                }
                position += 2
                let low = try parseHex4()
                guard (0xDC00...0xDFFF).contains(low) else {
                    throw JSONParseError(message: "invalid surrogate pair escape", offset: escapeOffset)
                }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            }
            appendUTF8(scalar, to: &scratch)
            return
        default:
            throw fail("invalid escape in string")
        }
        position += 2
    }

    private mutating func parseHex4() throws(JSONParseError) -> UInt32 {
        guard bytes.count - position >= 4 else { throw fail("invalid \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[position]
            let digit: UInt8
            switch byte {
            case 0x30...0x39: digit = byte - 0x30
            case 0x41...0x46: digit = byte - 0x41 + 10
            case 0x61...0x66: digit = byte - 0x61 + 10
            default: throw fail("invalid \\u escape")
            }
            value = value << 4 | UInt32(digit)
            position += 1
        }
        return value
    }

    private func appendUTF8(_ scalar: UInt32, to scratch: inout [UInt8]) {
        switch scalar {
        case 0..<0x80:
            scratch.append(UInt8(scalar))
        case 0x80..<0x800:
            scratch.append(UInt8(0xC0 | scalar >> 6))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        case 0x800..<0x10000:
            scratch.append(UInt8(0xE0 | scalar >> 12))
            scratch.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        default:
            scratch.append(UInt8(0xF0 | scalar >> 18))
            scratch.append(UInt8(0x80 | scalar >> 12 & 0x3F))
            scratch.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        }
    }

    // MARK: Numbers

    private func isDigit(_ index: Int) -> Bool {
        index < bytes.count && bytes[index] >= ASCII.zero && bytes[index] <= ASCII.nine
    }

    mutating func parseNumber() throws(JSONParseError) -> JSON {
        if let value = plainInteger() { return .int(value) }
        let start = position
        let negative = bytes[position] == ASCII.minus
        if negative { position += 1 }
        guard isDigit(position) else { throw fail("invalid number") }
        let digitsStart = position
        if bytes[position] == ASCII.zero {
            position += 1
            if isDigit(position) { throw fail("leading zero in number") }
        } else {
            while isDigit(position) { position += 1 }
        }
        let digitsEnd = position
        var isInteger = true
        if position < bytes.count, bytes[position] == ASCII.dot {
            isInteger = false
            position += 1
            guard isDigit(position) else { throw fail("invalid number") }
            while isDigit(position) { position += 1 }
        }
        if position < bytes.count, bytes[position] == ASCII.lowerE || bytes[position] == ASCII.upperE {
            isInteger = false
            position += 1
            if position < bytes.count, bytes[position] == ASCII.plus || bytes[position] == ASCII.minus { position += 1 }
            guard isDigit(position) else { throw fail("invalid number") }
            while isDigit(position) { position += 1 }
        }
        if isInteger, let value = integerValue(digitsStart..<digitsEnd, negative: negative) {
            return .int(value)
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
        guard let value = Double(text), value.isFinite else {
            throw JSONParseError(message: "number out of range", offset: start)
        }
        return .double(value)
    }

    /// The common number, an integer of at most 18 digits (which cannot overflow) with no
    /// fraction or exponent, read in one pass; nil, with nothing read, for the full grammar to
    /// read or refuse (a leading zero, 19 digits or more, a fraction, an exponent, no digit).
    mutating func plainInteger() -> Int64? {
        var index = position
        let negative = bytes[index] == ASCII.minus
        if negative { index += 1 }
        let digitsStart = index
        var value: Int64 = 0
        while index < bytes.count, index - digitsStart < 18 {
            let digit = bytes[index] &- ASCII.zero
            guard digit < 10 else { break }
            value = value &* 10 &+ Int64(digit)
            index += 1
        }
        let count = index - digitsStart
        guard count > 0, count == 1 || bytes[digitsStart] != ASCII.zero else { return nil }
        if index < bytes.count {
            let next = bytes[index]
            if next &- ASCII.zero < 10 || next == ASCII.dot || next == ASCII.lowerE || next == ASCII.upperE { return nil }
        }
        position = index
        return negative ? -value : value
    }

    /// The exact value when it fits in Int64; accumulates negatively so Int64.min is reachable.
    private func integerValue(_ digits: Range<Int>, negative: Bool) -> Int64? {
        var value: Int64 = 0
        for index in digits {
            let (multiplied, overflowA) = value.multipliedReportingOverflow(by: 10)
            let (next, overflowB) = multiplied.subtractingReportingOverflow(Int64(bytes[index] - ASCII.zero))
            if overflowA || overflowB { return nil }
            value = next
        }
        if negative { return value }
        let (positive, overflow) = Int64(0).subtractingReportingOverflow(value)
        return overflow ? nil : positive
    }
}
