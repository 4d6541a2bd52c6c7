/// A connection's prepared statements by SQL text, looked up for every statement a store runs.
/// The text asked for is nearly always the very string asked for before (a literal at its call
/// site), so a small table indexed by the address of its UTF-8 finds it with one comparison of
/// the two strings, which is immediate for the same string. A `[String: Statement]` lookup ran
/// SipHash over every byte of the text and compared them all: about 1,400 instructions for each
/// of the 19 statements a verification start + check runs. Any other text (built at run time, or
/// pushed out of its slot) is found by its contents, as before. An entry holds its text, so
/// while it is in the table no other string can have that address. Texts of up to 15 bytes
/// (`BEGIN`, `COMMIT`) live inside their `String` and have no address: a short list compares
/// them whole, which for such strings is one comparison of two words.
struct StatementCache {
    private struct Recent {
        let address: UInt
        let text: String
        let statement: Statement
    }

    /// A safety valve against SQL built dynamically: past this many distinct texts, the cache restarts.
    static let limit = 512
    private static let slotCount = 128

    private var byText: [String: Statement] = [:]
    private var recent = [Recent?](repeating: nil, count: slotCount)
    private var short: [(text: String, statement: Statement)] = []
    private static let shortLimit = 8
    /// Lookups that had to hash the text (a statement not in its slot): for tests.
    private(set) var lookupsByText = 0

    var count: Int { byText.count }

    mutating func statement(for sql: String) -> Statement? {
        guard let address = Self.address(of: sql) else {
            if let entry = short.first(where: { $0.text == sql }) { return entry.statement }
            return lookupByText(sql)
        }
        let slot = Self.slot(for: address)
        if let entry = recent[slot], entry.address == address, entry.text == sql { return entry.statement }
        guard let statement = lookupByText(sql) else { return nil }
        recent[slot] = Recent(address: address, text: sql, statement: statement)
        return statement
    }

    mutating func insert(_ statement: Statement, for sql: String) {
        if byText.count >= Self.limit { removeAll() }
        byText[sql] = statement
        if let address = Self.address(of: sql) {
            recent[Self.slot(for: address)] = Recent(address: address, text: sql, statement: statement)
        } else if short.count < Self.shortLimit {
            short.append((sql, statement))
        }
    }

    /// Finalizes every statement (before the connection closes).
    mutating func removeAll() {
        byText.removeAll()
        recent = [Recent?](repeating: nil, count: Self.slotCount)
        short.removeAll()
    }

    private mutating func lookupByText(_ sql: String) -> Statement? {
        lookupsByText += 1
        return byText[sql]
    }

    /// Where the text's UTF-8 lies; nil for a string short enough to live inline (its bytes are
    /// copied out for each look, so it has no address of its own). No SQL statement is that short.
    private static func address(of sql: String) -> UInt? {
        guard sql.utf8.count > 15 else { return nil }
        return sql.utf8.withContiguousStorageIfAvailable { UInt(bitPattern: $0.baseAddress) } ?? nil
    }

    private static func slot(for address: UInt) -> Int {
        // Text addresses differ in their low bits by alignment only: mix before masking.
        Int(truncatingIfNeeded: (address &* 0x9E37_79B9_7F4A_7C15) >> 57) & (slotCount - 1)
    }
}
