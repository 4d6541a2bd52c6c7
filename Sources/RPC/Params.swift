import LineProtocol

/// The named parameters of a call, read with typed accessors that answer
/// `invalid_params` naming the field (never echoing its value) when a value is missing or wrong.
public struct Params: Sendable {
    public let members: [String: JSON]

    public init(_ params: JSON?) throws(RPCError) {
        switch params {
        case nil, .null?: members = [:]
        case .object(let object)?: members = object
        default: throw RPCError.invalidParams("params must be an object of named parameters")
        }
    }

    public init(members: [String: JSON]) { self.members = members }

    public subscript(key: String) -> JSON? { members[key] }

    public func has(_ key: String) -> Bool {
        if let value = members[key], value != .null { return true }
        return false
    }

    public func string(_ key: String, maxLength: Int = 4096) throws(RPCError) -> String {
        guard let value = try optionalString(key, maxLength: maxLength) else { throw missing(key, "a string") }
        return value
    }

    public func optionalString(_ key: String, maxLength: Int = 4096) throws(RPCError) -> String? {
        switch members[key] {
        case nil, .null?: return nil
        case .string(let value)?:
            guard value.utf8.count <= maxLength else {
                throw RPCError.invalidParams("\(key) is longer than \(maxLength) bytes", field: key)
            }
            return value
        default: throw wrongType(key, "a string")
        }
    }

    public func int(_ key: String, range: ClosedRange<Int64> = Int64.min...Int64.max) throws(RPCError) -> Int64 {
        guard let value = try optionalInt(key, range: range) else { throw missing(key, "an integer") }
        return value
    }

    public func optionalInt(_ key: String, range: ClosedRange<Int64> = Int64.min...Int64.max) throws(RPCError) -> Int64? {
        switch members[key] {
        case nil, .null?: return nil
        case .int(let value)?:
            guard range.contains(value) else {
                throw RPCError.invalidParams("\(key) must be between \(range.lowerBound) and \(range.upperBound)", field: key)
            }
            return value
        default: throw wrongType(key, "an integer")
        }
    }

    public func bool(_ key: String) throws(RPCError) -> Bool {
        guard let value = try optionalBool(key) else { throw missing(key, "true or false") }
        return value
    }

    public func optionalBool(_ key: String) throws(RPCError) -> Bool? {
        switch members[key] {
        case nil, .null?: return nil
        case .bool(let value)?: return value
        default: throw wrongType(key, "true or false")
        }
    }

    public func optionalObject(_ key: String) throws(RPCError) -> [String: JSON]? {
        switch members[key] {
        case nil, .null?: return nil
        case .object(let value)?: return value
        default: throw wrongType(key, "an object")
        }
    }

    private func missing(_ key: String, _ expected: String) -> RPCError {
        RPCError.invalidParams("\(key) is required: \(expected)", field: key)
    }

    private func wrongType(_ key: String, _ expected: String) -> RPCError {
        RPCError.invalidParams("\(key) must be \(expected)", field: key)
    }
}

/// The parameter names a method takes. Checked before anything else runs (no session lookup, no
/// work): an unknown name is `invalid_params` naming it, with the names the method takes in
/// `data.accepted`, so a misspelt `sms_verifcation` can never be silently ignored; then each
/// required name must be present and not null. `session` is the credential every door may attach
/// (the HTTP door copies `Authorization: Bearer` into it), so a method that takes none ignores it.
public struct AcceptedParams: Sendable, Equatable {
    public let required: [String]
    public let optional: [String]

    public init(required: [String] = [], optional: [String] = []) {
        self.required = required
        self.optional = optional
    }

    public static let none = AcceptedParams()

    /// Every name, sorted (what `data.accepted` lists).
    public var names: [String] { (required + optional).sorted() }

    public func check(_ params: Params, method: String) throws(RPCError) {
        // A few names each: looked through in place, no set built per request.
        let unknown = params.members.keys.filter { $0 != "session" && !required.contains($0) && !optional.contains($0) }
        if let first = unknown.min() {
            let listed: JSON = .array(names.map(JSON.string))
            // A name is echoed only when it looks like one: a key may be anything a client typed.
            guard Self.isPrintableName(first) else {
                throw RPCError(.invalidParams, "\(method) was given a parameter it does not take", extra: ["accepted": listed])
            }
            throw RPCError(
                .invalidParams, "\(first) is not a parameter of \(method)", extra: ["field": .string(first), "accepted": listed])
        }
        // A missing session is the session check's to answer (`unauthenticated`), as at the gateway.
        if let missing = required.first(where: { $0 != "session" && !params.has($0) }) {
            throw RPCError.invalidParams("\(missing) is required", field: missing)
        }
    }

    private static func isPrintableName(_ name: String) -> Bool {
        (1...64).contains(name.utf8.count) && name.utf8.allSatisfy {
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".")
        }
    }
}

extension Router {
    /// Registers a method whose parameters are checked against `accepts` before `handler` runs.
    public func register(_ method: String, execution: Execution = .pool, accepts: AcceptedParams, _ handler: @escaping Handler) {
        register(method, execution: execution) { params, context in
            try accepts.check(params, method: method)
            return try handler(params, context)
        }
    }
}

/// Domain errors of a service convert themselves to the wire error in one place.
public protocol RPCErrorConvertible: Error {
    var rpcError: RPCError { get }
}
