import HTTP
import Platform
import Runtime

/// An `HTTPServer` over `handler` on 127.0.0.1:0, on a loop thread of its own: the server tests
/// give it their routes, the gateway door's tests the door. `stop()` drains like SIGTERM would.
open class HTTPServerOnLoop: @unchecked Sendable {
    public let loopThread: LoopThread
    public let server: HTTPServer
    public let endpoint: Endpoint

    public var loop: EventLoop { loopThread.loop }

    public init(handler: HTTPHandler, limits: HTTPLimits = HTTPLimits()) throws {
        loopThread = try LoopThread()
        let server = HTTPServer(loop: loopThread.loop, limits: limits, handler: handler, logger: Logger(service: "test", sink: LogSink()), replicaID: "test")
        self.server = server
        endpoint = Endpoint(host: "127.0.0.1", port: try loopThread.sync { try server.listen(on: Endpoint(host: "127.0.0.1", port: 0)).port })
    }

    public var connectionCount: Int { (try? loopThread.sync { [server] in server.connectionCount }) ?? -1 }
    public var state: ServerState? { try? loopThread.sync { [server] in server.state } }

    /// Drains like SIGTERM would and waits for the loop to end.
    public func stop() {
        loopThread.drainAndShutdown { [server] done in server.drain(completion: done) }
    }
}
