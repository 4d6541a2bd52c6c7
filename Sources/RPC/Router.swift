import FoundationEssentials
import LineProtocol
import Platform
import Runtime

/// The method table of a service: `service.method` -> a handler with typed params.
/// Handlers run on the worker pool (they may block on SQLite or scrypt); trivial ones (ping,
/// health, metrics) may run inline on the loop. A handler that calls another service is
/// `async`: it gives its thread back while it waits for the answer (`WorkerPool.submitTask`). Pool work carries the
/// request's deadline: the pool refuses what cannot finish in time (`overloaded`, at once) and
/// never runs what waited past it (see `WorkerPool`).
public final class Router: RPCDispatcher, @unchecked Sendable {
    public typealias Handler = @Sendable (Params, CallContext) throws -> JSON
    public typealias AsyncHandler = @Sendable (Params, CallContext) async throws -> JSON

    public enum Execution: Sendable { case inline, pool }

    private struct Route {
        let execution: Execution
        let body: Body
        let metricsSlot: Metrics.Slot
    }

    private enum Body {
        case blocking(Handler)
        case awaiting(AsyncHandler)
    }

    // Filled before the server starts, then only read (by every request): unchecked in release
    // builds, as `Channel.outbound` says why.
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    private var routes = MethodTable<Route>()
    private let workers: WorkerPool
    public let metrics: Metrics

    private let unknownMethodSlot: Metrics.Slot

    public init(workers: WorkerPool, metrics: Metrics) {
        self.workers = workers
        self.metrics = metrics
        unknownMethodSlot = metrics.slot(for: "unknown")
    }

    /// Registers a method. Call during setup only, before the server starts.
    public func register(_ method: String, execution: Execution = .pool, _ handler: @escaping Handler) {
        insert(method, Route(execution: execution, body: .blocking(handler), metricsSlot: metrics.slot(for: method)))
    }

    /// Registers a method whose handler awaits other services; it runs on the pool.
    public func register(_ method: String, _ handler: @escaping AsyncHandler) {
        insert(method, Route(execution: .pool, body: .awaiting(handler), metricsSlot: metrics.slot(for: method)))
    }

    private func insert(_ method: String, _ route: Route) {
        precondition(!routes.contains(method), "\(method) registered twice")
        routes.insert(route, for: method)
    }

    public var methods: [String] { routes.names.sorted() }

    public func dispatch(_ request: RPCRequest, context: CallContext, reply: @escaping @Sendable (Result<JSON, RPCError>) -> Void) {
        route(request, context: context, answer: .outcome(reply))
    }

    /// The line server's call: the reply it gives is called as it is, not through a closure
    /// made per request to wrap it.
    public func dispatch(_ request: RPCRequest, context: CallContext, replying reply: @escaping @Sendable (RPCReply) -> Void) {
        route(request, context: context, answer: .reply(reply))
    }

    /// Whichever reply a door gave: no allocation to hold either.
    private enum Answer: Sendable {
        case outcome(@Sendable (Result<JSON, RPCError>) -> Void)
        case reply(@Sendable (RPCReply) -> Void)

        func callAsFunction(_ outcome: Result<JSON, RPCError>) {
            switch self {
            case .outcome(let body): body(outcome)
            case .reply(let body): body(.outcome(outcome))
            }
        }
    }

    private func route(_ request: RPCRequest, context: CallContext, answer reply: Answer) {
        guard let route = routes.value(for: request.method) else {
            metrics.record(unknownMethodSlot, microseconds: 0, errorReason: Reason.methodNotFound.rawValue)
            reply(.failure(.methodNotFound(request.method)))
            return
        }
        let started = MonotonicClock.nowMicroseconds()
        switch route.execution {
        case .inline:
            // Run here and now: no closure to make for it.
            run(route, request, context, started: started, reply: reply)
        case .pool:
            let metrics = self.metrics
            // Work that can no longer finish by its deadline is dropped unrun: the caller gets (or
            // already got) `timeout`.
            let expired: @Sendable () -> Void = {
                metrics.record(route.metricsSlot, microseconds: 0, errorReason: Reason.timeout.rawValue)
                metrics.increment("workers.expired")
                reply(.failure(RPCError(.timeout, "\(request.method) could not finish before its deadline and was not run")))
            }
            let admission: WorkerPool.Admission
            switch route.body {
            case .blocking(let handler):
                let work: @Sendable () -> Void = { [self] in
                    finish(route, request, context, started: started, Self.invoke(handler, request, context), reply: reply)
                }
                admission = workers.submit(deadlineMilliseconds: context.deadlineMilliseconds, work, expired: expired)
            case .awaiting(let handler):
                let work: @Sendable () async -> Void = { [self] in
                    finish(route, request, context, started: started, await Self.invoke(handler, request, context), reply: reply)
                }
                admission = workers.submitTask(deadlineMilliseconds: context.deadlineMilliseconds, work, expired: expired)
            }
            if admission != .accepted {
                metrics.record(route.metricsSlot, microseconds: 0, errorReason: Reason.overloaded.rawValue)
                metrics.increment(admission == .cannotFinishInTime ? "workers.refused_late" : "workers.refused_full")
                reply(.failure(RPCError(.overloaded, "server busy, try again")))
            }
        }
    }

    private func run(_ route: Route, _ request: RPCRequest, _ context: CallContext, started: Int64, reply: Answer) {
        guard case .blocking(let handler) = route.body else { preconditionFailure("an awaiting handler runs on the pool") }
        finish(route, request, context, started: started, Self.invoke(handler, request, context), reply: reply)
    }

    private func finish(
        _ route: Route, _ request: RPCRequest, _ context: CallContext, started: Int64, _ outcome: Result<JSON, RPCError>, reply: Answer
    ) {
        let elapsed = MonotonicClock.nowMicroseconds() - started
        let reason = outcome.failureReason
        metrics.record(route.metricsSlot, microseconds: elapsed, errorReason: reason)
        if route.execution == .pool {
            // Per-request lines are debug here: the gateway writes the access log.
            context.logger.debug("request", [
                "rpc.method": .string(request.method), "rpc.duration_us": .int(elapsed),
                "rpc.reason": reason.map(JSON.string) ?? .null,
            ])
        }
        reply(outcome)
    }

    private static func invoke(_ handler: Handler, _ request: RPCRequest, _ context: CallContext) -> Result<JSON, RPCError> {
        do {
            return .success(try handler(try Params(request.params), context))
        } catch {
            return failure(error, request, context)
        }
    }

    private static func invoke(_ handler: AsyncHandler, _ request: RPCRequest, _ context: CallContext) async -> Result<JSON, RPCError> {
        do {
            return .success(try await handler(try Params(request.params), context))
        } catch {
            return failure(error, request, context)
        }
    }

    private static func failure(_ error: any Error, _ request: RPCRequest, _ context: CallContext) -> Result<JSON, RPCError> {
        if let error = error as? RPCError { return .failure(error) }
        if let error = error as? RPCErrorConvertible { return .failure(error.rpcError) }
        // Unknown errors stay in the log (type only); the client sees a bare `internal`.
        // Our error types never carry secrets in their descriptions (bound values stay out).
        context.logger.error("handler failed", [
            "rpc.method": .string(request.method), "error": .string(String(describing: error)),
        ])
        return .failure(.internalError())
    }
}

extension Result where Failure == RPCError {
    var failureReason: String? {
        if case .failure(let error) = self { return error.reasonText ?? "error" }
        return nil
    }
}
