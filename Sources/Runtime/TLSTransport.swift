import Platform
import TLS

extension TLSServerContext {
    /// A transport for one accepted socket; the handshake runs on the first reads and writes.
    public func makeTransport(for socket: Socket) throws(TLSError) -> Transport {
        TLSTransport(connection: try connection(overSocket: socket.fd))
    }
}

/// A server-role TLS session as a channel's transport: "wants the socket" becomes `.wouldBlock`,
/// and `wantsWritable` is set while OpenSSL waits for the socket to take bytes.
final class TLSTransport: Transport {
    private let connection: TLSConnection
    private(set) var wantsWritable = false

    init(connection: TLSConnection) { self.connection = connection }

    var isHandshaking: Bool { connection.isHandshaking }

    /// Fills as much of `buffer` as OpenSSL has decrypted or can decrypt now, so no record is
    /// left waiting inside OpenSSL while the event loop sees nothing new on the socket.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> IOResult<Int> {
        var total = 0
        while total < buffer.count {
            let progress: TLSProgress
            do {
                progress = try connection.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[total...]))
            } catch {
                // Hand over what arrived before the failure; the next read reports it.
                if total > 0 { return .done(total) }
                throw error
            }
            switch progress {
            case .done(0):
                return .done(total)
            case .done(let count):
                total += count
            case .wantsRead:
                wantsWritable = false
                return total > 0 ? .done(total) : .wouldBlock
            case .wantsWrite:
                wantsWritable = true
                return total > 0 ? .done(total) : .wouldBlock
            }
        }
        return .done(total)
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws -> IOResult<Int> {
        guard !bytes.isEmpty else { return .done(0) }
        switch try connection.write(bytes) {
        case .done(let count):
            wantsWritable = false
            return .done(count)
        case .wantsWrite:
            wantsWritable = true
            return .wouldBlock
        case .wantsRead:
            wantsWritable = false
            return .wouldBlock
        }
    }

    func close() { connection.shutdown() }
}
