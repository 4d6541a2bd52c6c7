import Contract
import LineProtocol
import ServiceKit

/// The gateway's policy for one public method, read from its declaration in `Contract`: a
/// method not declared public does not exist from outside (-32601), whatever the services
/// behind the gateway register. A class, immutable: a request's dispatch holds its method's
/// policy by one reference (a struct was copied with its strings, about 160 instructions a request).
public final class MethodPolicy: Sendable {
    public typealias Access = MethodContract.Access
    public typealias Retry = MethodContract.Retry
    public typealias CacheEffect = MethodContract.CacheEffect

    /// Where the call goes: the service's pool, or a gateway-local answer.
    public let service: String
    public let access: Access
    /// The rate-limit group (per client address, per group): see `RateLimits`.
    public let group: String
    public let retry: Retry
    public let cacheEffect: CacheEffect
    /// Route to the replica named in `params.request_id` (`vr_<replica>_...`), not round robin.
    public let routesByRequestID: Bool
    /// Answered by the gateway itself; its parameters are checked here against `form`.
    public let isLocal: Bool
    public let form: MethodContract.Form
    let contract: MethodContract

    init(_ contract: MethodContract) {
        self.contract = contract
        service = contract.service
        access = contract.access
        group = contract.group.rawValue
        retry = contract.retry
        cacheEffect = contract.cacheEffect
        routesByRequestID = contract.routesByRequestID
        isLocal = contract.service == "gateway"
        form = contract.form
    }

    /// An equal policy in an object of its own (each loop's routes hold their own copies).
    convenience init(copying other: MethodPolicy) {
        self.init(other.contract)
    }
}

public enum PolicyTable {
    /// Rate-limit groups. Defaults live in `RateLimits.defaults`.
    public enum Group {
        public static let ping = MethodContract.RateGroup.ping.rawValue
        public static let observe = MethodContract.RateGroup.observe.rawValue
        public static let auth = MethodContract.RateGroup.auth.rawValue
        public static let codes = MethodContract.RateGroup.codes.rawValue
        public static let reset = MethodContract.RateGroup.reset.rawValue
        public static let standard = MethodContract.RateGroup.standard.rawValue
    }

    /// Every public method of the contract. Services: gateway (answered locally), identity,
    /// verification, accounts, reset.
    public static let methods: [String: MethodPolicy] = Dictionary(
        uniqueKeysWithValues: Contract.publicMethods.map { ($0.name, MethodPolicy($0)) })

    public static func policy(for method: String) -> MethodPolicy? { methods[method] }

    /// The services the gateway forwards to, in a fixed order.
    public static let services = Contract.services

    /// The replica id named by a verification request id (`vr_<replica>_<random>`), if well formed.
    public static func replicaID(fromRequestID requestID: String) -> String? {
        guard requestID.hasPrefix("vr_") else { return nil }
        let rest = requestID.dropFirst(3)
        guard let underscore = rest.firstIndex(of: "_") else { return nil }
        let replica = rest[..<underscore]
        let allowed = replica.utf8.allSatisfy {
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || $0 == UInt8(ascii: "-")
        }
        return replica.isEmpty || !allowed ? nil : String(replica)
    }
}
