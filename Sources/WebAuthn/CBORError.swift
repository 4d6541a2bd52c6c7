/// Why CBOR input was refused, and the offset of the item's first byte (or where input ended).
/// It never holds input bytes.
public struct CBORError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        case truncated = "input ends inside an item"
        case trailingBytes = "bytes after the item"
        case inputTooLong = "input longer than the input limit"
        case tooDeep = "nesting deeper than the depth limit"
        case tooManyItems = "more items than the item limit"
        case stringTooLong = "string longer than the string limit"
        case indefiniteLength = "indefinite lengths are not accepted"
        case tag = "tags are not accepted"
        case float = "floating-point numbers are not accepted"
        case unsupportedSimpleValue = "only false, true and null are accepted as simple values"
        case reservedAdditionalInfo = "reserved additional information"
        case negativeOutOfRange = "negative integer below Int64.min"
        case invalidUTF8 = "text string is not valid UTF-8"
        case invalidMapKey = "map keys must be integers or text"
        case duplicateMapKey = "duplicate map key"
    }

    public let kind: Kind
    public let offset: Int

    public init(_ kind: Kind, at offset: Int) {
        self.kind = kind
        self.offset = offset
    }

    public var description: String { "CBOR: \(kind.rawValue) at byte \(offset)" }
}
