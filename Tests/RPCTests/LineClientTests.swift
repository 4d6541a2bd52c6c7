import Platform
import RPC
import TestSupport
import XCTest

final class LineClientTests: XCTestCase {
    /// A refused connect throws from the initialiser, after every stored property is set, so the
    /// client's deinit runs too: the socket must be closed there or in the initialiser, not in both.
    func testARefusedConnectClosesItsSocketOnce() throws {
        let (listener, port) = try LoopbackSocket.listen()
        LibC.close(listener)
        let before = LibC.unopenDescriptorCloses
        XCTAssertThrowsError(try LineClient(Endpoint(host: "127.0.0.1", port: port))) { error in
            XCTAssertEqual((error as? SystemError)?.errno, ECONNREFUSED, "\(error)")
        }
        XCTAssertEqual(LibC.unopenDescriptorCloses, before, "a descriptor was closed twice")
    }
}

final class LineClientReadAvailableLinesTests: XCTestCase {
    /// The bench reads answers in place: a line cut across two reads is handed once, whole, after
    /// the lines that came before it, and every complete line of a read is handed by that read.
    func testALineCutAcrossReadsIsHandedOnceWholeAndInOrder() throws {
        let (listener, port) = try LoopbackSocket.listen()
        defer { LibC.close(listener) }
        let secondPart = Blocker()
        let server = Thread {
            let peer = accept(listener, nil, nil)
            _ = LoopbackSocket.sendAll(peer, Array("first\nsec".utf8))
            secondPart.hold()
            _ = LoopbackSocket.sendAll(peer, Array("ond\nthird\n".utf8))
            LibC.close(peer)
        }
        server.start()
        let client = try LineClient(Endpoint(host: "127.0.0.1", port: port))
        var lines: [String] = []
        XCTAssertTrue(try client.readAvailableLines { lines.append(String(decoding: $0, as: UTF8.self)) })
        XCTAssertEqual(lines, ["first"])
        XCTAssertTrue(secondPart.waitUntilHeld())
        secondPart.release()
        XCTAssertTrue(try client.readAvailableLines { lines.append(String(decoding: $0, as: UTF8.self)) })
        XCTAssertEqual(lines, ["first", "second", "third"])
        XCTAssertFalse(try client.readAvailableLines { lines.append(String(decoding: $0, as: UTF8.self)) }, "the server closed")
    }
}
