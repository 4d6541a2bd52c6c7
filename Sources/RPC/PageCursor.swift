import LineProtocol
import Secrets

/// The one cursor of every paginated method: a page's `next` is an opaque string, given back as
/// `before` to read the next (older) page, and null on the last page. It seals the position of
/// the page's last entry to the user it was issued to (`SequenceSealer`), under the service's
/// key: it shows nothing of other users' entries, and a number, a guess or another user's
/// cursor is refused.
public struct PageCursor: Sendable {
    private let sealer: SequenceSealer

    /// `method` keeps one method's cursors from being taken by another's.
    public init(key: [UInt8], method: String) {
        sealer = SequenceSealer(key: key, purpose: "page cursor \(method)")
    }

    public func next(after position: Int64, owner: String) -> String {
        sealer.seal(position, owner: owner)
    }

    /// The position `cursor` names (nil when there is none); anything but a cursor this
    /// method issued to `owner` is `invalid_params` on `before`.
    public func position(_ cursor: String?, owner: String) throws(RPCError) -> Int64? {
        guard let cursor else { return nil }
        guard let position = sealer.open(cursor, owner: owner) else { throw Self.invalidBefore }
        return position
    }

    /// `before` as a method's params give it: a string of a cursor's length, else `invalid_params`.
    public static func before(_ params: Params) throws(RPCError) -> String? {
        guard params.has("before") else { return nil }
        guard case .string(let cursor)? = params["before"], cursor.utf8.count == SequenceSealer.textByteCount else { throw invalidBefore }
        return cursor
    }

    public static let invalidBefore = RPCError.invalidParams("before must be the `next` string of an earlier page", field: "before")
}
