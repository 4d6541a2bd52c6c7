import LineProtocol
import Platform
import Runtime

/// What a connection to one replica needs to know, built once per replica. A connection holds
/// its own copy: it may outlive its client while a connect is under way.
struct UpstreamPeer {
    let address: SocketAddress
    let loop: EventLoop
    let service: String
    let logger: Logger
}

/// One replica address: its connections and its back-off state. Loop-confined.
final class UpstreamTarget {
    let peer: UpstreamPeer
    var address: SocketAddress { peer.address }
    /// Read only from calls the client makes (it is alive then).
    unowned let client: RPCClient
    private let connectionCount: Int
    // Read for every call: unchecked in release builds, as `Channel.outbound` says why.
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    private var connections: [UpstreamConnection] = []
    private var nextConnection = 0
    /// The loop turn `nextConnection` was chosen in.
    private var lastTurn: UInt64 = 0
    var downUntilMilliseconds: Int64 = 0
    private var consecutiveFailures = 0
    /// The replica's own name, learned from its health answer; it survives restarts on the same address.
    var replicaID: String?
    private var learning = false

    init(address: SocketAddress, client: RPCClient) {
        peer = UpstreamPeer(address: address, loop: client.loop, service: client.service, logger: client.clientLogger)
        self.client = client
        connectionCount = client.connectionCount
    }

    func send(_ call: OutgoingCall, callID: Int64, deadlineMilliseconds: Int64, completion: any ForwardCompletion) {
        connectionForThisTurn().send(call, callID: callID, deadlineMilliseconds: deadlineMilliseconds, completion: completion)
    }

    /// Calls made in one turn of the loop share a connection, the next turn takes the next one
    /// (opening it while there are fewer than `connectionCount`): a client's pipelined requests
    /// then travel together and their answers come back in one read, so they leave for the client
    /// in one write rather than one per connection.
    private func connectionForThisTurn() -> UpstreamConnection {
        let turn = peer.loop.iteration
        if turn == lastTurn, nextConnection < connections.count, !connections[nextConnection].isFinished {
            return connections[nextConnection]
        }
        lastTurn = turn
        connections.removeAll { $0.isFinished }
        guard connections.count >= connectionCount else {
            let connection = UpstreamConnection(target: self)
            connections.append(connection)
            nextConnection = connections.count - 1
            connection.start()
            return connection
        }
        nextConnection = (nextConnection + 1) % connections.count
        return connections[nextConnection]
    }

    func learnReplicaID() {
        guard !learning else { return }
        learning = true
        let callID = client.takeCallID()
        let call = OutgoingCall(
            request: RPCRequest(method: "\(client.service).health", params: nil, id: .int(callID)), client: nil, requestID: nil,
            budgetMilliseconds: nil, token: client.serviceToken)
        let deadline = MonotonicClock.nowMilliseconds() + 2000
        send(call, callID: callID, deadlineMilliseconds: deadline, completion: ClosureCompletion { [self] outcome in
            learning = false
            if case .success(let health) = outcome.result, let id = health.decoded()["replica_id"]?.stringValue { replicaID = id }
        })
    }

    func connectionSucceeded() {
        consecutiveFailures = 0
        downUntilMilliseconds = 0
    }

    func connectionFailed() {
        consecutiveFailures += 1
        // 100 ms, 200 ms, ... up to 2 s: a dead replica is skipped fast, a returning one is found soon.
        let backoff = min(2000, 100 << min(consecutiveFailures - 1, 5))
        downUntilMilliseconds = MonotonicClock.nowMilliseconds() + Int64(backoff)
    }

    func checkDeadlines(nowMilliseconds now: Int64) {
        for connection in connections { connection.checkDeadlines(nowMilliseconds: now) }
    }

    func retire() {
        for connection in connections { connection.closeWhenIdle() }
    }
}
