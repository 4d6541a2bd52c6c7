import LineProtocol

/// The one cursor of every paginated method: a page's `next` is an opaque string, given back as
/// `before` to read the next (older) page, and null on the last page. Clients never build or
/// read one, so what it holds (today the position of the page's last entry) may change.
public enum PageCursor {
    static let maxBytes = 32

    public static func encode(_ position: Int64) -> String {
        precondition(position > 0, "positions start at 1")
        return String(position)
    }

    /// The position a cursor names; nil for anything this service did not issue.
    public static func decode(_ cursor: String) -> Int64? {
        guard (1...maxBytes).contains(cursor.utf8.count),
            cursor.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
            let position = Int64(cursor), position > 0
        else { return nil }
        return position
    }

    /// The position in `params.before`, nil when absent; anything but a cursor this service
    /// issued (an integer included) is `invalid_params` on `before`.
    public static func before(_ params: Params) throws(RPCError) -> Int64? {
        guard params.has("before") else { return nil }
        guard case .string(let cursor)? = params["before"], let position = decode(cursor) else { throw invalidBefore }
        return position
    }

    public static let invalidBefore = RPCError.invalidParams("before must be the `next` string of an earlier page", field: "before")
}
