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
