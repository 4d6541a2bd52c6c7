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

/// Domain errors of a service convert themselves to the wire error in one place.
public protocol RPCErrorConvertible: Error {
    var rpcError: RPCError { get }
}
