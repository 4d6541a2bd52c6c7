extension Parser {
    private static let answerHead: StaticString = #"{"jsonrpc":"2.0","id":"#
    private static let resultMember: StaticString = #","result":"#

    /// A result answer exactly as `RPCReply` writes one: `{"jsonrpc":"2.0","id":N,"result":V}`
    /// with N a non-negative integer of at most 18 digits, V compact, no whitespace anywhere.
    /// The id, and V's range checked by `skipValue` as the envelope path checks a result passed
    /// through. Nil for any other line, `position` wherever it stopped: the envelope path judges
    /// those. Every line this accepts, that path accepts with the same id and result, so it
    /// skips only the work of matching member names and building the `jsonrpc` string.
    mutating func readResultAnswer() -> (id: Int64, result: Range<Int>)? {
        guard limits.maxDepth >= 1, bytes.count <= limits.maxBytes, expect(Self.answerHead) else { return nil }
        // A plain integer of at most 18 digits; a longer, signed or fractional id goes the general way.
        guard position < bytes.count, bytes[position] != ASCII.minus, let id = plainInteger(), expect(Self.resultMember) else { return nil }
        let start = position
        skippedWhitespace = false
        guard (try? skipValue(depth: 1)) != nil, !skippedWhitespace else { return nil }
        let end = position
        guard position == bytes.count - 1, bytes[position] == ASCII.closeBrace else { return nil }
        return (id, start..<end)
    }
}
