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

            /// A liveness answer only: replicas and figures are on the operator's metrics listener.
            public struct Response: Codable, Sendable, Equatable, WireKeyed {
                /// `ok` while the gateway can serve every service, else `down`.
                public let status: String
                enum CodingKeys: String, CodingKey, CaseIterable { case status }
            }
        }
    }
}
