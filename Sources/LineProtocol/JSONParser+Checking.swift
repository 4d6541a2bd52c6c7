/// Checking a value without building it, by the rules `parseValue` applies (UTF-8, escapes and
/// surrogates, number syntax and range, duplicate keys, depth, string length): for a value the
/// gateway passes through as the bytes it received. Accepts exactly what `parseValue` accepts.
extension Parser {
    mutating func skipValue(depth: Int) throws(JSONParseError) {
        skipWhitespace()
        guard position < bytes.count else { throw fail("unexpected end of input") }
        switch bytes[position] {
        case ASCII.openBrace:
            if depth >= limits.maxDepth { throw fail("nesting deeper than the depth limit") }
            try skipObject(depth: depth + 1)
        case ASCII.openBracket:
            if depth >= limits.maxDepth { throw fail("nesting deeper than the depth limit") }
            try skipArray(depth: depth + 1)
        case ASCII.quote:
            try skipString()
        case 0x74:  // t
            try expectLiteral("true")
        case 0x66:  // f
            try expectLiteral("false")
        case 0x6E:  // n
            try expectLiteral("null")
        case ASCII.minus, ASCII.zero...ASCII.nine:
            // Also the range check: a number that is no finite double is refused here as there.
            _ = try parseNumber()
        default:
            throw fail("unexpected character")
        }
    }

    private mutating func skipArray(depth: Int) throws(JSONParseError) {
        try walkArray { parser throws(JSONParseError) in try parser.skipValue(depth: depth) }
    }

    private mutating func skipObject(depth: Int) throws(JSONParseError) {
        var keys = ObjectKeys()
        try walkObject(readingKeys: { parser throws(JSONParseError) in try parser.skipKey() }) { parser, key, keyOffset throws(JSONParseError) in
            try parser.skipValue(depth: depth)
            if try !keys.insert(key, of: parser) { throw JSONParseError(message: "duplicate object key", offset: keyOffset) }
        }
    }

    /// A key checked like any string, and where its bytes lie: no `String` is built for it.
    private mutating func skipKey() throws(JSONParseError) -> CheckedKey {
        let start = position + 1
        let beyondPlainASCII = try skipString()
        return CheckedKey(bytes: start..<(position - 1), isPlainASCII: !beyondPlainASCII)
    }

    /// Two keys' bytes are the same.
    fileprivate func sameBytes(_ left: Range<Int>, _ right: Range<Int>) -> Bool {
        left.count == right.count && hasBytes(UnsafeBufferPointer(rebasing: bytes[right]), at: left.lowerBound)
    }

    /// A checked key, decoded.
    fileprivate func decoded(_ key: Range<Int>) throws(JSONParseError) -> String {
        var reader = self
        reader.position = key.lowerBound - 1  // its opening quote
        return try reader.parseString()
    }

    /// A string checked as `parseString` checks it (its decoded length against the limit
    /// included), without building it. True when it holds more than plain ASCII: an escape, or
    /// a character beyond ASCII (Swift compares those strings by canonical equivalence, not by
    /// their bytes).
    @discardableResult
    private mutating func skipString() throws(JSONParseError) -> Bool {
        position += 1  // opening quote
        var decodedBytes = 0
        var escape: [UInt8] = []
        var beyondPlainASCII = false
        while position < bytes.count {
            let plainEnd = PlainRun.end(in: bytes, from: position, stoppingAtNonASCII: true)
            decodedBytes += plainEnd - position
            position = plainEnd
            guard position < bytes.count else { break }
            let byte = bytes[position]
            if byte == ASCII.quote {
                if decodedBytes > limits.maxStringBytes { throw fail("string longer than the string limit") }
                position += 1
                return beyondPlainASCII
            } else if byte == ASCII.backslash {
                beyondPlainASCII = true
                try parseEscape(into: &escape)
                decodedBytes += escape.count
                escape.removeAll(keepingCapacity: true)
            } else if byte < 0x20 {
                throw fail("unescaped control character in string")
            } else if byte < 0x80 {
                decodedBytes += 1
                position += 1
            } else {
                beyondPlainASCII = true
                let end = try validateUTF8Sequence(at: position)
                decodedBytes += end - position
                position = end
            }
        }
        throw fail("unterminated string")
    }
}

/// A checked key: the bytes between its quotes, and whether they are plain ASCII (no escape, no
/// other character), so that they are the key and compare as it does.
private struct CheckedKey {
    let bytes: Range<Int>
    let isPlainASCII: Bool
}

/// The keys of one object seen so far. While all are plain ASCII they are compared by their
/// bytes in the line (two such keys are equal exactly when their bytes are): the first held
/// alone (an object of one member allocates nothing), then a short list. Past the list, or once
/// a key is not plain ASCII, every key is decoded into a set of strings.
private struct ObjectKeys {
    private static let listLimit = 16
    private var first: Range<Int>?
    private var list: [Range<Int>] = []
    private var decoded: Set<String>?

    /// False when `key` was there already.
    mutating func insert(_ key: CheckedKey, of parser: Parser) throws(JSONParseError) -> Bool {
        if decoded == nil && key.isPlainASCII {
            guard let first else {
                first = key.bytes
                return true
            }
            if parser.sameBytes(first, key.bytes) || list.contains(where: { parser.sameBytes($0, key.bytes) }) { return false }
            if list.count < Self.listLimit {
                list.append(key.bytes)
                return true
            }
        }
        if decoded == nil {
            var keys = Set<String>()
            for seen in [first].compactMap({ $0 }) + list { keys.insert(try parser.decoded(seen)) }
            decoded = keys
            list = []
        }
        return decoded!.insert(try parser.decoded(key.bytes)).inserted
    }
}
