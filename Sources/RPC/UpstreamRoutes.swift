import Foundation
import Platform

/// What worker threads know of a client's replicas: a copy the loop publishes whenever its
/// targets change (an address added or retired, a replica id learned, a back-off begun or
/// ended), so a worker picks a replica without a trip through the loop. Thread-safe.
final class UpstreamRoutes: @unchecked Sendable {
    struct Route {
        let address: SocketAddress
        let replicaID: String?
        let downUntilMilliseconds: Int64
    }

    private let lock = NSLock()
    private var routes: [Route] = []
    private var roundRobin = 0

    /// The whole list: the client's addresses changed.
    func publish(_ routes: [Route]) {
        lock.lock()
        self.routes = routes
        lock.unlock()
    }

    /// One replica's news; nothing when its address was retired meanwhile.
    func update(_ route: Route) {
        lock.lock()
        if let index = routes.firstIndex(where: { $0.address == route.address }) { routes[index] = route }
        lock.unlock()
    }

    /// The replica named `replicaID`, or the next one taking calls in turn; nil when none can
    /// be picked here (the id is not learned yet, every replica is backing off): the event
    /// loop's path then gives the answer it always gives.
    func pick(replicaID: String?) -> SocketAddress? {
        let now = MonotonicClock.nowMilliseconds()
        lock.lock()
        defer { lock.unlock() }
        if let replicaID {
            guard let route = routes.first(where: { $0.replicaID == replicaID }), route.downUntilMilliseconds <= now else { return nil }
            return route.address
        }
        for offset in 0..<routes.count {
            let index = (roundRobin + offset) % routes.count
            if routes[index].downUntilMilliseconds <= now {
                roundRobin = index + 1
                return routes[index].address
            }
        }
        return nil
    }
}
