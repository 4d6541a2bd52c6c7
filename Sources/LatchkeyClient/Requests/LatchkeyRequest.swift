import Foundation

/// One public method of the protocol (`protocol/methods.json`) as a typed value: its
/// parameters are the value's members, its result is `Response`. `LatchkeyClient.send(_:)`
/// calls any of them; the flows (`signIn`, `balances`, ...) are built on the same calls.
public protocol LatchkeyRequest: Codable, Sendable {
    associatedtype Response: Decodable & Sendable
    /// `service.method`, as in the method table.
    static var method: String { get }
    /// Whether the call carries the stored session (as `Authorization: Bearer`, never in the body).
    static var session: SessionUse { get }
    /// Whether the client may send it again by itself (after `Retry-After`, a 503, a lost connection).
    static var retry: RetryClass { get }
}

public enum SessionUse: Sendable {
    /// An open method: no session is sent.
    case none
    /// The stored session is sent; without one the call fails with `LatchkeyError.notSignedIn`, unsent.
    case required
    /// The request itself says whether it needs the session (`identity.challenge`).
    case optional
}

/// Mirrors the gateway's own rule for failover (`protocol/gateway.md`): the client never
/// repeats what could act twice.
public enum RetryClass: Sendable {
    /// A read, or an action whose second run changes nothing.
    case safe
    /// A write deduplicated by the `idempotency_key` the request carries (the same key on every try).
    case idempotencyKey
    /// Not idempotent: any failure is the caller's to handle (`Retry-After` is in the error).
    case never
}

/// Requests whose session use depends on their members.
protocol OptionalSessionRequest: LatchkeyRequest {
    var sendsSession: Bool { get }
}

/// A model whose wire members are exactly its `CodingKeys`: the method-table test compares
/// them with `protocol/methods.json`.
protocol WireKeyed {
    associatedtype CodingKeys: CodingKey & CaseIterable
}

extension WireKeyed {
    static var wireKeys: [String] { CodingKeys.allCases.map(\.stringValue) }
}

extension LatchkeyRequest {
    /// `identity.login` -> `/v1/identity/login` (the HTTP door's route for every public method).
    static var path: String { "/v1/" + method.replacingOccurrences(of: ".", with: "/") }
}
