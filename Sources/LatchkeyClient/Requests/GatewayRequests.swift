import Foundation

extension LatchkeyClient {
    /// `gateway.*`: answered by the gateway itself (`protocol/gateway.md`).
    public enum Gateway: LatchkeyService {
        public static let name = "gateway"
        public typealias Ping = ServicePing<Gateway>

        public struct Health: LatchkeyRequest, WireKeyed {
            public static let method = "gateway.health", session = SessionUse.none, retry = RetryClass.safe
            public init() {}
            enum CodingKeys: CodingKey, CaseIterable {}

            public struct Response: Codable, Sendable, Equatable, WireKeyed {
                /// `ok`, `degraded` or `down`.
                public let status: String
                /// Each service's replicas and their state (the operator's view; its shape may grow).
                public let services: JSONValue
                enum CodingKeys: String, CodingKey, CaseIterable { case status, services }
            }
        }

        public struct Metrics: LatchkeyRequest, WireKeyed {
            public static let method = "gateway.metrics", session = SessionUse.none, retry = RetryClass.safe
            public init() {}
            enum CodingKeys: CodingKey, CaseIterable {}

            public struct Response: Codable, Sendable, Equatable, WireKeyed {
                public let uptimeSeconds: Int
                /// Per method: `count`, `errors` by reason, `p50_us`, `p99_us`.
                public let methods: JSONValue
                public let counters: JSONValue
                enum CodingKeys: String, CodingKey, CaseIterable { case uptimeSeconds = "uptime_s", methods, counters }
            }
        }
    }
}
