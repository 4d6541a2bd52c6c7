import Foundation
import LineProtocol
import Platform
import RPC
import Runtime

/// A real line-protocol server on 127.0.0.1 (port 0 unless a restart needs the same one) in the test process: a router with whatever
/// methods the test registers, its own loop thread and worker pool, drained by `stop()`.
public final class RouterServer: @unchecked Sendable {
    public let loopThread: LoopThread
    public let router: Router
    public let server: RPCServer
    public let workers: WorkerPool
    public let endpoint: Endpoint

    public var loop: EventLoop { loopThread.loop }

    public init(
        service: String = "test", port: Int = 0, limits: ServerLimits = ServerLimits(), workerThreads: Int = 4, maxQueued: Int = 64,
        register: (Router) -> Void
    ) throws {
        loopThread = try LoopThread()
        workers = WorkerPool(threadCount: workerThreads, maxQueued: maxQueued)
        router = Router(workers: workers, metrics: Metrics())
        register(router)
        let server = RPCServer(
            loop: loopThread.loop, limits: limits, dispatcher: router, logger: Logger(service: service, sink: LogSink()),
            replicaID: service, trustsCallerMeta: true)
        self.server = server
        endpoint = Endpoint(host: "127.0.0.1", port: try loopThread.sync { try server.listen(on: Endpoint(host: "127.0.0.1", port: port)).port })
    }

    /// Drains like SIGTERM would (answers what is in flight), then ends the loop and the workers.
    public func stop() {
        loopThread.drainAndShutdown { [server] done in server.drain(completion: done) }
        _ = workers.shutdownAndJoin()
    }

    /// Drops every connection at once and stops listening (a crash, as seen from outside).
    public func crash() {
        let server = self.server
        _ = try? loopThread.sync {
            server.drain {}
            server.forceClose()
        }
    }
}
