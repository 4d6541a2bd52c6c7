import LineProtocol

/// The shape of a value on the wire: what a parameter may be and what a result member is.
/// The router checks parameters against it before a handler runs; debug builds check every
/// answer against it; methods.json and openapi.json are written from it.
public indirect enum Schema: Sendable, Equatable {
    /// A string of at most `maxBytes` UTF-8 bytes; `values`, when not empty, are the only ones
    /// taken. `pattern` (ECMA-262, as JSON Schema reads it) and `format` say, for readers and
    /// generated clients, the rule the service itself applies (a username's characters).
    /// `nonEmpty` refuses "" (an idempotency key).
    case string(maxBytes: Int? = nil, values: [String] = [], pattern: String? = nil, format: String? = nil, nonEmpty: Bool = false)
    /// An integer at least `minimum` and at most `maximum`.
    case integer(minimum: Int64? = nil, maximum: Int64? = nil)
    case boolean
    /// An object with exactly these members (no others).
    case object([Member])
    /// An object whose members are named freely, each of this shape (health checks, metrics).
    case map(Schema)
    /// An object of any members, e.g. a transfer's payload bound to its code.
    case anyObject
    case array(Schema)
    /// This shape, or null.
    case nullable(Schema)
    /// Any JSON value (a health check's own figures).
    case any

    public static let string = Schema.string()
    public static let integer = Schema.integer()
    /// Seconds since 1970 (UTC).
    public static let timestamp = Schema.integer(minimum: 0)
    /// An amount in minor units (cents).
    public static let amount = Schema.integer()
}

/// A named member of a parameter object or a result.
public struct Member: Sendable, Equatable {
    public enum Presence: Sendable, Equatable {
        /// A parameter that must be given (not null); a result member always present.
        case required
        /// A parameter that may be left out (or null); a result member present only sometimes.
        case optional
    }

    public let name: String
    public let schema: Schema
    public let presence: Presence

    public init(_ name: String, _ schema: Schema, _ presence: Presence = .required) {
        self.name = name
        self.schema = schema
        self.presence = presence
    }

    /// The same member, present only sometimes.
    public var optional: Member { Member(name, schema, .optional) }
    public var isRequired: Bool { presence == .required }
}
