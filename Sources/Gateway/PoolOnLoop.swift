import LineProtocol
import Platform
import RPC

/// A service's pool as the forwards of one event loop reach it: one per pool and loop, built
/// with that loop's routes (`LoopLocal`). A forwarded call holds this, never the pool itself:
/// the pool is shared by every loop, and a reference taken per request passed its count's cache
/// line between the cores on every forward, where this one's count stays on its loop's core.
final class PoolOnLoop: Sendable {
    let pool: ServicePool
    /// The client of this copy's loop (see `forward`).
    private let client: RPCClient

    init(pool: ServicePool, loopPart part: Int, of parts: Int) {
        self.pool = pool
        client = pool.client(forLoopPart: part, of: parts)
    }

    /// Forwards on the calling loop's own client: this copy's, or, on a loop that shares its
    /// part (more loops than parts), the one the pool finds for it.
    func forward(
        _ method: String, params: JSON?, client caller: String?, requestID: RequestID, timeoutMilliseconds: Int64, address: SocketAddress?,
        excluding: Set<SocketAddress>, to completion: any ForwardCompletion
    ) {
        func send(on own: RPCClient) {
            own.forward(
                method, params: params, client: caller, requestID: requestID, timeoutMilliseconds: timeoutMilliseconds, address: address,
                excluding: excluding, to: completion)
        }
        if client.loop.isInLoopThread { send(on: client) } else { send(on: pool.clientForCurrentLoop) }
    }
}
