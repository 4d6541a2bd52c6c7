import LineProtocol
import Platform
import RPC
import Runtime

/// Where a forwarded call's outcome goes, held in the call itself (no closure to allocate).
protocol ForwardedCallEnd: Sendable {
    func callEnded(_ outcome: Result<RawJSON, RPCError>)
}

/// A forwarded call's end given as a closure (the session check, which shares one call).
struct ClosureEnd: ForwardedCallEnd {
    let body: @Sendable (Result<RawJSON, RPCError>) -> Void
    func callEnded(_ outcome: Result<RawJSON, RPCError>) { body(outcome) }
}

/// One call the gateway forwards to a service, with bounded failover. What every attempt needs
/// (the request, the caller's `meta` and deadline, the attempts left, where the outcome goes) is
/// held here once, so an attempt's way back through the upstream client captures one reference
/// instead of copying the request and its context at every step. Attempts follow one another
/// (the next starts from the previous one's outcome), so the counters are never touched by two
/// threads at once.
final class ForwardedCall<End: ForwardedCallEnd>: ForwardCompletion, @unchecked Sendable {
    /// This loop's view of the pool (see `PoolOnLoop`).
    private let upstream: PoolOnLoop
    private var pool: ServicePool { upstream.pool }
    /// What is sent on of the request (its `id` and `meta` are the caller's, not the service's).
    private let method: String
    private let params: JSON?
    private let retrySafe: Bool
    private let client: String?
    private let requestID: RequestID
    private let deadlineMilliseconds: Int64
    private let upstreamTimeoutMilliseconds: Int64
    private let end: End
    private var attemptsLeft: Int
    // Read by every attempt, which never overlap: unchecked in release builds, as
    // `Channel.outbound` says why.
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    private var excluded: Set<SocketAddress> = []
    /// The replica this attempt must use (state that lives on one replica, or a last fallback).
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    private var pinned: SocketAddress?

    init(
        pool: PoolOnLoop, request: RPCRequest, retrySafe: Bool, pinned: SocketAddress?, context: CallContext, settings: GatewaySettings,
        end: End
    ) {
        upstream = pool
        method = request.method
        params = request.params
        self.retrySafe = retrySafe
        self.pinned = pinned
        client = context.client
        requestID = context.id
        deadlineMilliseconds = context.deadlineMilliseconds
        upstreamTimeoutMilliseconds = settings.upstreamTimeoutMilliseconds
        attemptsLeft = settings.maxAttempts
        self.end = end
    }

    func start() {
        // The deadline came from the loop's step clock: so does its now.
        let timeout = min(upstreamTimeoutMilliseconds, max(1, deadlineMilliseconds - EventLoop.nowForCurrentStep))
        // The loop's client itself skips the replicas out of rotation (`setOutOfRotation`), and
        // ignores `excluding` for a pinned call.
        upstream.forward(
            method, params: params, client: client, requestID: requestID, timeoutMilliseconds: timeout, address: pinned, excluding: excluded, to: self)
    }

    func forwardEnded(_ outcome: ForwardOutcome) { received(outcome) }

    /// Only a failure of the gateway's own link takes the replica out of rotation; the call then
    /// moves to another replica when it never left (`notSent`) or when it is safe to repeat.
    /// Whatever the replica answered, even an error about one of its own dependencies, is its
    /// answer: passed through, never resent, nobody blamed.
    private func received(_ outcome: ForwardOutcome) {
        guard let failure = outcome.linkFailure else {
            end.callEnded(outcome.result)
            return
        }
        if failure == .timedOut {
            end.callEnded(.failure(RPCError(.timeout, "\(pool.service) did not answer in time")))
            return
        }
        if failure == .malformedAnswer {
            // It answered, badly: never passed on, never resent; out of rotation until a probe answers well.
            if let address = outcome.address { pool.markFailed(address, reason: "malformed answer") }
            end.callEnded(.failure(RPCError(.unavailable, "\(pool.service) answered a malformed response")))
            return
        }
        let address = outcome.address
        // Every replica is backing off after failed connects (a service that just started, or
        // restarted): rather than fail at once, try one of them directly, which ignores back-off.
        if address == nil, pinned == nil, attemptsLeft > 1, let fallback = pool.fallbackAddress(excluding: excluded) {
            pinned = fallback
            attemptsLeft = 1
            start()
            return
        }
        let sent = failure == .lostAfterSending
        if let address { pool.markFailed(address, reason: sent ? "connection lost" : "connect failed") }
        let canRetry = pinned == nil && attemptsLeft > 1 && address != nil && (!sent || retrySafe)
        guard canRetry, let address else {
            end.callEnded(.failure(RPCError(.unavailable, "\(pool.service) is unavailable")))
            return
        }
        excluded.insert(address)
        attemptsLeft -= 1
        start()
    }
}
