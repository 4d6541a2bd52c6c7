/// Where a call's outcome goes: an object told once, on the client's loop thread. A caller that
/// is an object already (the gateway's forwarded call) passes itself, so a call allocates no
/// closure context to reach it.
public protocol ForwardCompletion: AnyObject, Sendable {
    func forwardEnded(_ outcome: ForwardOutcome)
}

/// A closure as a completion. Unchecked: it is called on the client's loop thread only, where
/// a loop-confined caller (a replica's target learning its id) made it.
final class ClosureCompletion: ForwardCompletion, @unchecked Sendable {
    private let body: (ForwardOutcome) -> Void

    init(_ body: @escaping (ForwardOutcome) -> Void) { self.body = body }

    func forwardEnded(_ outcome: ForwardOutcome) { body(outcome) }
}

/// A completion that reads the result (`RPCClient.call`).
final class DecodingCompletion: ForwardCompletion {
    private let body: @Sendable (CallOutcome) -> Void

    init(_ body: @escaping @Sendable (CallOutcome) -> Void) { self.body = body }

    func forwardEnded(_ outcome: ForwardOutcome) {
        body(CallOutcome(result: outcome.result.map { $0.decoded() }, address: outcome.address, linkFailure: outcome.linkFailure))
    }
}
