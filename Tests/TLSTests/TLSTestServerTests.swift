import Foundation
import TLS
import TLSTestSupport
import XCTest

/// The test server is the scaffolding of every TLS test, so its own promises are tested here.
final class TLSTestServerTests: XCTestCase {
    /// Tests stop their server both in a `defer` and before an assertion. A second stop must not
    /// close the descriptor number the first one freed: by then it can be anyone's (libdispatch's
    /// epoll descriptor once was, and its manager thread crashed under the thread sanitizer).
    func testStoppingTwiceLeavesTheFreedDescriptorToItsNextOwner() throws {
        let certificates = try TestCertificates.shared()
        let server = try TLSTestServer(context: try TLSServerContext(certificateChainFile: certificates.valid.certificate, privateKeyFile: certificates.valid.key)) { _ in }
        server.stop()
        var ends: [Int32] = [-1, -1]
        XCTAssertEqual(pipe(&ends), 0)
        defer { ends.forEach { close($0) } }
        let reused = server.listeningDescriptor
        XCTAssertEqual(dup2(ends[0], reused), reused)
        defer { close(reused) }
        server.stop()
        XCTAssertNotEqual(fcntl(reused, F_GETFD), -1, "the second stop closed a descriptor the server no longer owned")
    }
}
