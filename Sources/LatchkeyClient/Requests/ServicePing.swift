/// A service behind the gateway, as the first half of its methods' names (`identity` in `identity.login`).
public protocol LatchkeyService: Sendable {
    static var name: String { get }
}

/// `<service>.ping`: the service itself answers, through the gateway. One type for every
/// service (`LatchkeyClient.Identity.Ping` is `ServicePing<LatchkeyClient.Identity>`).
public struct ServicePing<Service: LatchkeyService>: LatchkeyRequest, WireKeyed {
    public typealias Response = Pong
    public static var method: String { Service.name + ".ping" }
    public static var session: SessionUse { .none }
    public static var retry: RetryClass { .safe }
    public init() {}
    enum CodingKeys: CodingKey, CaseIterable {}
}
