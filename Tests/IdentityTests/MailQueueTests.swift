import Delivery
import Foundation
import Storage
import TestSupport
import XCTest

@testable import Identity

/// Account mails wait in identity's database, sealed, until the provider takes them.
final class MailQueueTests: IdentityTestCase {
    private var queue: MailQueue!

    override func setUpWithError() throws {
        try super.setUpWithError()
        queue = MailQueue(database: service.store.database, serverKey: Array(repeating: 9, count: 32), clock: clock.identityClock)
    }

    private static let mail = OutgoingMessage(
        channel: .email, to: "alice@example.com", subject: "Confirm", text: "latchkey://verify-email?token=lke_secret", html: "<p>lke_secret</p>")

    private func rows() throws -> [[UInt8]] {
        try service.store.database.read { c in try c.query("SELECT sealed FROM mail_queue", []).map { try $0.blob("sealed") } }
    }

    func testAQueuedMailIsSealedWholeAndSentOnce() throws {
        try queue.enqueue(Self.mail)
        let stored = try rows()
        XCTAssertEqual(stored.count, 1)
        let bytes = String(decoding: stored[0], as: UTF8.self)
        XCTAssertFalse(bytes.contains("lke_secret") || bytes.contains("alice@example.com"), "neither the token nor the address in clear")

        let sent = SharedList<OutgoingMessage>()
        XCTAssertEqual(try queue.sendNext { sent.append($0) }, .sent)
        XCTAssertEqual(sent.all.map(\.to), ["alice@example.com"])
        XCTAssertEqual(sent.all.first?.text, Self.mail.text)
        XCTAssertEqual(sent.all.first?.html, Self.mail.html)
        XCTAssertEqual(try queue.sendNext { sent.append($0) }, .nothingDue)
        XCTAssertEqual(try queue.pending(), 0)
    }

    func testAFailingProviderIsTriedAgainAfterItsBackOffAndARefusalForGoodIsGivenUp() throws {
        try queue.enqueue(Self.mail)
        let down = DeliveryError(provider: "smtp", detail: "connection refused", permanent: false)
        XCTAssertEqual(try queue.sendNext { _ throws(DeliveryError) in throw down }, .retryLater)
        XCTAssertEqual(try queue.sendNext { _ in XCTFail("not due yet") }, .nothingDue)
        clock.advance(seconds: MailQueue.retryDelays[0])
        XCTAssertEqual(try queue.sendNext { _ in }, .sent)

        try queue.enqueue(Self.mail)
        let refused = DeliveryError(provider: "smtp", detail: "550 no such user", permanent: true)
        XCTAssertEqual(try queue.sendNext { _ throws(DeliveryError) in throw refused }, .givenUp)
        XCTAssertEqual(try queue.pending(), 0)
    }

    func testAMailWhoseSenderStoppedGoesAfterTheLeaseAndAfterARestart() throws {
        try queue.enqueue(Self.mail)
        // A sender that claimed it and stopped (kill -9) before the provider answered.
        XCTAssertNotNil(try queue.claim(now: clock.nowSeconds))
        let restarted = MailQueue(database: try openStore().database, serverKey: Array(repeating: 9, count: 32), clock: clock.identityClock)
        XCTAssertEqual(try restarted.sendNext { _ in XCTFail("still the stopped sender's") }, .nothingDue)
        clock.advance(seconds: MailQueue.leaseSeconds + 1)
        let sent = SharedList<String>()
        XCTAssertEqual(try restarted.sendNext { sent.append($0.to) }, .sent)
        XCTAssertEqual(sent.all, ["alice@example.com"])
    }

    func testTwoSendersNeverSendOneMailTwice() throws {
        for _ in 0..<20 { try queue.enqueue(Self.mail) }
        let sent = SharedList<Int>()
        let other = MailQueue(database: service.store.database, serverKey: Array(repeating: 9, count: 32), clock: clock.identityClock)
        let queues = [queue!, other]
        DispatchQueue.concurrentPerform(iterations: 8) { index in
            while (try? queues[index % 2].sendNext { _ in sent.append(index) }) == .sent {}
        }
        XCTAssertEqual(sent.all.count, 20, "each of the 20 mails once")
        XCTAssertEqual(try queue.pending(), 0)
    }
}
