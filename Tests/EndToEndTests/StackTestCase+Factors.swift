import LineProtocol
import RPC
import XCTest

extension StackTestCase {
    /// The seed app's second factor after a password login on a new device: a login code by
    /// SMS through `client`, read from the outbox and checked. Until then the session owes
    /// `sms` and may do nothing else.
    func passLoginFactor(_ client: LineClient, session: JSON, file: StaticString = #filePath, line: UInt = #line) throws {
        let requestID = try XCTUnwrap(try client.result("verification.start", ["session": session])["request_id"], file: file, line: line)
        let code = try code(for: requestID.stringValue ?? "")
        let checked = try client.result("verification.check", ["session": session, "request_id": requestID, "code": .string(code)])
        XCTAssertEqual(checked["aal"], 2, file: file, line: line)
    }
}
