import Foundation
import Platform
import Runtime
import ServerTestSupport
import TestSupport
import XCTest

/// Who keeps a connection alive: its channel holds the delegate while open and lets it go once
/// closed (no weak reference, whose side table would slow every retain of a busy connection).
final class ChannelOwnershipTests: XCTestCase {
    private var loopThread: LoopThread!

    override func setUpWithError() throws {
        loopThread = try LoopThread()
    }

    override func tearDown() {
        loopThread.shutdown()
    }

    /// A connection-like owner: holds its channel, records what it is told, closes on end of input.
    private final class Owner: ChannelDelegate {
        var channel: Channel?
        let reads: SharedList<String>
        let closed: DispatchSemaphore

        init(reads: SharedList<String> = SharedList(), closed: DispatchSemaphore = DispatchSemaphore(value: 0)) {
            self.reads = reads
            self.closed = closed
        }

        func channel(_ channel: Channel, didRead bytes: UnsafeRawBufferPointer) { reads.append(String(decoding: bytes, as: UTF8.self)) }
        func channelDidDrain(_ channel: Channel) {}
        func channelDidReadEndOfInput(_ channel: Channel) { channel.close() }
        func channelDidClose(_ channel: Channel) {
            self.channel = nil
            closed.signal()
        }
    }

    /// A connected pair of sockets: the channel's end and the test's.
    private func socketPair() throws -> (Int32, Int32) {
        var fds: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else {
            throw TestFailure("socketpair failed: errno \(errno)")
        }
        return (fds[0], fds[1])
    }

    func testAnOpenChannelKeepsItsDelegateAndLetsItGoOnceClosed() throws {
        let (channelEnd, peer) = try socketPair()
        defer { LibC.close(peer) }
        let probe = WeakProbe()
        let reads = SharedList<String>()
        let closed = DispatchSemaphore(value: 0)
        let loop = loopThread.loop
        try loopThread.sync {
            let owner = Owner(reads: reads, closed: closed)
            let channel = Channel(loop: loop, socket: Socket(fd: channelEnd), peer: nil)
            channel.delegate = owner
            owner.channel = channel
            try channel.activate()
            probe.object = owner
        }
        _ = try loopThread.sync {}
        XCTAssertNotNil(probe.object, "nothing but its open channel holds the delegate, and it must")
        _ = "ping".utf8CString.withUnsafeBytes { write(peer, $0.baseAddress, 4) }
        shutdown(peer, Int32(SHUT_WR))
        XCTAssertEqual(closed.wait(timeout: .now() + 10), .success, "the delegate was told of the close")
        _ = try loopThread.sync {}  // the close has returned on the loop
        XCTAssertEqual(reads.all.joined(), "ping")
        XCTAssertNil(probe.object, "a closed channel let go of its delegate")
    }
}

/// A weak reference a test reads from any thread.
private final class WeakProbe: @unchecked Sendable {
    private let lock = NSLock()
    private weak var held: AnyObject?

    var object: AnyObject? {
        get { lock.withLock { held } }
        set { lock.withLock { held = newValue } }
    }
}
