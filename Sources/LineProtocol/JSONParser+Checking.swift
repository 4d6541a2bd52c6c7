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
        // Short keys are stored inline, without an allocation.
        var keys = ObjectKeys()
        try walkObject { parser, key, keyOffset throws(JSONParseError) in
            try parser.skipValue(depth: depth)
            if !keys.insert(key) { throw JSONParseError(message: "duplicate object key", offset: keyOffset) }
        }
    }

    /// A string checked as `parseString` checks it (its decoded length against the limit
    /// included), without building it.
    private mutating func skipString() throws(JSONParseError) {
        position += 1  // opening quote
        var decodedBytes = 0
        var escape: [UInt8] = []
        while position < bytes.count {
            let plainEnd = PlainRun.end(in: bytes, from: position, stoppingAtNonASCII: true)
            decodedBytes += plainEnd - position
            position = plainEnd
            guard position < bytes.count else { break }
            let byte = bytes[position]
            if byte == ASCII.quote {
                if decodedBytes > limits.maxStringBytes { throw fail("string longer than the string limit") }
                position += 1
                return
            } else if byte == ASCII.backslash {
                try parseEscape(into: &escape)
                decodedBytes += escape.count
                escape.removeAll(keepingCapacity: true)
            } else if byte < 0x20 {
                throw fail("unescaped control character in string")
            } else if byte < 0x80 {
                decodedBytes += 1
                position += 1
            } else {
                let end = try validateUTF8Sequence(at: position)
                decodedBytes += end - position
                position = end
            }
        }
        throw fail("unterminated string")
    }
}

/// The keys of one object seen so far: the first held alone (an object of one member, a
/// service's ping or a small result, allocates nothing), then a short list, then a set once the
/// object is large, so a hostile object with many keys costs no more than the parser's dictionary.
private struct ObjectKeys {
    private static let listLimit = 16
    private var first: String?
    private var list: [String] = []
    private var set: Set<String>?

    /// False when `key` was there already.
    mutating func insert(_ key: String) -> Bool {
        if set != nil { return set!.insert(key).inserted }
        guard let first else {
            first = key
            return true
        }
        if first == key || list.contains(key) { return false }
        list.append(key)
        if list.count >= Self.listLimit {
            set = Set(list)
            set!.insert(first)
            list = []
        }
        return true
    }
}
