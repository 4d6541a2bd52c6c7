import Platform

/// The listening socket on the loop: accepts in bounded bursts. When the process is out of
/// descriptors (`EMFILE`/`ENFILE`) the waiting client would keep the level-triggered socket
/// readable and the loop spinning: the listener frees its spare descriptor, accepts that client,
/// refuses it (`overloaded`, then close) and takes the spare back. Without a spare it stops
/// watching the socket until a connection closes or the next tick. Loop thread only.
final class AcceptingListener<Connection: ServedConnection>: EventHandler {
    let socket: Socket
    unowned let acceptor: ConnectionAcceptor<Connection>
    /// Kept open to be given up for one `accept` when there is no other descriptor; -1 when lost.
    private var spareDescriptor: Int32
    private var isPaused = false

    init(socket: Socket, acceptor: ConnectionAcceptor<Connection>) {
        self.socket = socket
        self.acceptor = acceptor
        spareDescriptor = Self.openSpare()
    }

    private static func openSpare() -> Int32 { open("/dev/null", O_RDONLY | O_CLOEXEC) }

    func handle(_ readiness: Readiness) {
        for _ in 0..<64 {
            do {
                guard case .done(let (connection, peer)) = try socket.accept() else { return }
                acceptor.accepted(connection, peer: peer)
            } catch where error.errno == EMFILE || error.errno == ENFILE {
                acceptor.descriptorsExhausted()
                if !refuseWithSpareDescriptor() {
                    pause()
                    return
                }
            } catch {
                // The client gave up before it was accepted (ECONNABORTED) or the kernel is short
                // of memory: try again on the next readiness.
                return
            }
        }
    }

    /// Accepts the waiting client on the spare descriptor only to refuse it. False without a spare.
    private func refuseWithSpareDescriptor() -> Bool {
        guard spareDescriptor >= 0 else { return false }
        LibC.close(spareDescriptor)
        defer { spareDescriptor = Self.openSpare() }
        guard case .done(let (connection, _))? = try? socket.accept() else { return false }
        acceptor.refuse(connection)
        return true
    }

    private func pause() {
        guard !isPaused else { return }
        isPaused = true
        acceptor.loop.reregister(socket.fd, readable: false, writable: false)
    }

    /// Watches the socket again after a pause (a connection closed, or the tick); the spare is retaken first.
    func resume() {
        guard isPaused else { return }
        if spareDescriptor < 0 { spareDescriptor = Self.openSpare() }
        isPaused = false
        acceptor.loop.reregister(socket.fd, readable: true, writable: false)
    }

    func close() {
        if spareDescriptor >= 0 { LibC.close(spareDescriptor) }
        spareDescriptor = -1
        socket.close()
    }
}
