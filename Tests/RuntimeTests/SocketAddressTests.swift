import Platform
import TestSupport
import XCTest

/// Addresses compare by their bytes and read as before (`host:port`, `[v6]:port`).
final class SocketAddressTests: XCTestCase {
    private func resolve(_ host: String, _ port: Int) throws -> SocketAddress {
        try XCTUnwrap(try SocketAddress.resolve(host: host, port: port).first)
    }

    /// Equal exactly when their descriptions are, with equal hashes; every pair of a mix of
    /// families, hosts and ports.
    func testEqualityAndHashFollowTheDescription() throws {
        let addresses = [
            try resolve("127.0.0.1", 7400), try resolve("127.0.0.1", 7401), try resolve("127.0.0.2", 7400),
            try resolve("::1", 7400), try resolve("::1", 7401), try resolve("::2", 7400), try resolve("0.0.0.0", 0),
            try resolve("127.0.0.1", 7400), try resolve("::1", 7400),
        ]
        XCTAssertEqual(addresses.map(\.description)[0...3], ["127.0.0.1:7400", "127.0.0.1:7401", "127.0.0.2:7400", "[::1]:7400"])
        for left in addresses {
            for right in addresses {
                XCTAssertEqual(left == right, left.description == right.description, "\(left) vs \(right)")
                if left == right { XCTAssertEqual(left.hashValue, right.hashValue, "\(left)") }
            }
        }
        XCTAssertEqual(Set(addresses).count, 7)
    }

    /// A connection's peer, as accept writes it, equals the address the other side resolved.
    func testAnAcceptedPeerEqualsTheResolvedAddress() throws {
        let listener = try Socket.listen(on: try resolve("127.0.0.1", 0))
        defer { listener.close() }
        let bound = try XCTUnwrap(listener.localAddress)
        let client = try Socket.connect(to: bound)
        defer { client.close() }
        let local = try XCTUnwrap(client.localAddress)
        var accepted: (Socket, SocketAddress)?
        XCTAssertTrue(try waitUntil("the connection is accepted") {
            if case .done(let pair) = try listener.accept() { accepted = pair }
            return accepted != nil
        })
        defer { accepted?.0.close() }
        XCTAssertEqual(accepted?.1, local)
        XCTAssertEqual(accepted?.1, try resolve("127.0.0.1", local.port))
    }

    /// An address is carried by value in every forwarded call's outcome: it holds only what an
    /// IPv6 address needs, not a `sockaddr_storage` (128 bytes).
    func testAnAddressIsSmall() {
        XCTAssertLessThanOrEqual(MemoryLayout<SocketAddress>.size, 32)
    }
}
