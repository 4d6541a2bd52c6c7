import Foundation
import LineProtocol
import RPC
import Secrets
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

    /// RFC 6238 with SHA-1, 6 digits, 30 s, written here apart from identity's implementation.
    func totp(_ base32: String, at time: Date = Date(), offsetSteps: Int64 = 0) throws -> String {
        let secret = try XCTUnwrap(Base32.decode(base32))
        let step = UInt64(Int64(time.timeIntervalSince1970) / 30 + offsetSteps)
        let mac = HMACAlgorithm.sha1.authenticate((0..<8).map { UInt8(truncatingIfNeeded: step >> (56 - 8 * UInt64($0))) }, key: secret)
        let offset = Int(mac[19] & 0x0f)
        let value = (UInt32(mac[offset] & 0x7f) << 24 | UInt32(mac[offset + 1]) << 16 | UInt32(mac[offset + 2]) << 8 | UInt32(mac[offset + 3])) % 1_000_000
        return String(format: "%06u", value)
    }

    /// The newest e-mail to `address` whose subject contains `subject`, waited for.
    func waitForMail(to address: String, subjectContaining subject: String) throws -> JSON {
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            if let mail = outbox().last(where: {
                $0["channel"] == "email" && $0["to"]?.stringValue == address && ($0["subject"]?.stringValue?.contains(subject) ?? false)
            }) { return mail }
            usleep(50_000)
        }
        throw MissingMessage(description: "no e-mail to \(address) about \(subject) within 20 s")
    }
}
