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

    mutating func parseValue(depth: Int) throws(JSONParseError) -> JSON {
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
