import Foundation
import LineProtocol
@testable import Platform
@testable import RPC
@testable import Runtime

/// A real server on 127.0.0.1:0 in the test process: its own event loop thread, a router
/// with whatever methods the test registers, shut down gracefully by `stop()`.
final class TestServer: @unchecked Sendable {
    let loop: EventLoop
    let router: Router
    let server: RPCServer
    let workers: WorkerPool
    let endpoint: Endpoint
    private let thread: Thread
    private let finished = DispatchSemaphore(value: 0)

    init(limits: ServerLimits = ServerLimits(), workerThreads: Int = 4, maxQueued: Int = 64, register: (Router) -> Void) throws {
        loop = try EventLoop()
        workers = WorkerPool(threadCount: workerThreads, maxQueued: maxQueued)
        router = Router(workers: workers, metrics: Metrics())
        register(router)
        server = RPCServer(
            loop: loop, limits: limits, dispatcher: router, logger: Logger(service: "test", sink: LogSink()),
            replicaID: "test", trustsCallerMeta: true)
        let address = try server.listen(on: Endpoint(host: "127.0.0.1", port: 0))
        endpoint = Endpoint(host: "127.0.0.1", port: address.port)
        let loop = self.loop
        let finished = self.finished
        thread = Thread {
            loop.run()
            finished.signal()
        }
        thread.start()
    }

    /// Drains like SIGTERM would and waits for the loop to end.
    func stop() {
        let server = self.server
        let loop = self.loop
        loop.execute { server.drain { loop.stop() } }
        finished.wait()
        workers.shutdownAndJoin()
    }
}
