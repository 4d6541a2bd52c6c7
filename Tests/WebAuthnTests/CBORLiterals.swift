import WebAuthn

/// Map literals for tests: `map([(1, 2), ("a", .null)])`.
func map(_ entries: [(CBOR, CBOR)]) -> CBOR { CBOR.map(entries) }

extension CBOR: ExpressibleByIntegerLiteral, ExpressibleByStringLiteral {
    public init(integerLiteral value: Int64) { self = .int(value) }

    public init(stringLiteral value: String) { self = .text(value) }
}
