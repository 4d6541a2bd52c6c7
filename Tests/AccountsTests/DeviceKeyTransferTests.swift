@testable import Accounts
import Foundation
import LineProtocol
import RPC
import Secrets
import StoreTestSupport
import TestSupport
import XCTest


/// Identity's key check in memory, with real ECDSA: the keys the test's "iPhones" hold.
final class FakeDeviceKeys: DeviceKeyPort, @unchecked Sendable {
    private let lock = NSLock()
    private var keys: [String: (key: P256PublicKey, revoked: Bool)] = [:]
    private var checkCount = 0
    /// Holds each check of a signature that verifies, once counted, until the test releases it.
    var holdValid: Blocker?

    var checks: Int {
        lock.lock()
        defer { lock.unlock() }
        return checkCount
    }

    func enroll(_ deviceID: String, _ key: P256PublicKey) {
        lock.lock()
        keys[deviceID] = (key, false)
        lock.unlock()
    }

    func revoke(_ deviceID: String) {
        lock.lock()
        keys[deviceID]?.revoked = true
        lock.unlock()
    }

    func verifySignature(
        userID: String, deviceID: String, message: [UInt8], signature: String, appAttestAssertion: String?, context: CallContext?
    ) throws(RPCError) {
        lock.lock()
        checkCount += 1
        let entry = keys[deviceID]
        let hold = holdValid
        lock.unlock()
        guard let entry else { throw RPCError(.notFound, "this device has no key", extra: ["detail": "no_key"]) }
        guard !entry.revoked else { throw RPCError(.notFound, "this device's key was revoked", extra: ["detail": "key_revoked"]) }
        guard let der = Base64URL.decode(signature), entry.key.isValidSignature(der: der, for: message) else {
            throw RPCError(.invalidCredentials, "the signature does not verify")
        }
        hold?.hold()
    }
}

class DeviceKeyTransferTests: AccountsTestCase {
    var keys: FakeDeviceKeys!
    let iPhone = P256PrivateKey()

    override func setUpWithError() throws {
        try super.setUpWithError()
        keys = FakeDeviceKeys()
        keys.enroll("iphone-1", iPhone.publicKey)
        let clock = self.clock!
        service = AccountsService(store: store, verification: verification, deviceKeys: keys, clock: { clock.nowSeconds })
        try fund("u1", .checking, 10_000)
    }

    private func keyTransfer(_ amount: Int64 = 2_500, key: String = "k-1", device: String = "iphone-1") throws -> KeyTransferTicket {
        try service.transferWithDeviceKey(
            userID: "u1", sessionDeviceID: "iphone-1", deviceID: device,
            TransferRequest(from: .checking, to: .saving, amountMinor: amount, idempotencyKey: key))
    }

    private func confirm(_ ticket: KeyTransferTicket, signing bytes: [UInt8]? = nil, device: String = "iphone-1") throws -> [AccountBalance] {
        let signature = Base64URL.encode(iPhone.signature(for: bytes ?? ticket.sign))
        return try service.confirmWithDeviceKey(
            userID: "u1", sessionDeviceID: "iphone-1", transferID: ticket.ticket.transfer.id, deviceID: device, signature: signature, context: nil)
    }

    func testTheSignBytesNameEveryDetailOfTheTransferAndItsChallenge() throws {
        let ticket = try keyTransfer()
        let json = ticket.json
        XCTAssertEqual(json["request_id"], .null, "no code")
        XCTAssertEqual(json["confirm_with"], "device_key")
        XCTAssertEqual(verification.startCount, 0, "verification is not called")
        let challenge = try XCTUnwrap(json["challenge"]?.stringValue)
        XCTAssertEqual(Base64URL.decode(challenge)?.count, 32)
        let sign = try XCTUnwrap(Base64URL.decode(try XCTUnwrap(json["sign"]?.stringValue)))
        XCTAssertEqual(String(decoding: sign, as: UTF8.self), """
            latchkey-transfer-v1
            service=Latchkey
            transfer_id=\(ticket.ticket.transfer.id)
            amount=2500
            currency=USD
            from=checking
            to=saving
            challenge=\(challenge)
            """)
        let again = try keyTransfer()
        XCTAssertEqual(again, ticket, "a retry with the same key answers the same challenge")
        XCTAssertNotEqual(try keyTransfer(key: "k-2").challenge.challenge, ticket.challenge.challenge)
    }

    func testTheDevicesSignatureBooksTheTransferOnce() throws {
        let ticket = try keyTransfer()
        XCTAssertEqual(try confirm(ticket).map(\.balanceMinor), [7_500, 2_500])
        XCTAssertEqual(try confirm(ticket).map(\.balanceMinor), [7_500, 2_500], "a repeat answers done and moves nothing")
        XCTAssertEqual(try balance("u1", .checking), 7_500)
        try assertAuditClean()
    }

    func testASignatureOverAnyOtherDetailFailsLikeAWrongCodeThreeTimesAtMost() throws {
        let ticket = try keyTransfer()
        let text = String(decoding: ticket.sign, as: UTF8.self)
        let other = try keyTransfer(1, key: "k-other")
        let forgeries = [
            text.replacingOccurrences(of: "amount=2500", with: "amount=25"),
            text.replacingOccurrences(of: "to=saving", with: "to=checking"),
            String(decoding: other.sign, as: UTF8.self),
        ]
        for (index, forged) in forgeries.enumerated() {
            assertThrows(.invalidSignature(attemptsLeft: 2 - index)) { _ = try confirm(ticket, signing: Array(forged.utf8)) }
        }
        assertThrows(.tooManyAttempts) { _ = try confirm(ticket) }
        XCTAssertEqual(keys.checks, 3, "no fourth signature is checked")
        XCTAssertEqual(try balance("u1", .checking), 10_000)
        let renewed = text.replacingOccurrences(of: Base64URL.encode(ticket.challenge.challenge), with: Base64URL.encode(SecureRandom.bytes(32)))
        assertThrows(.invalidSignature(attemptsLeft: 2)) { _ = try confirm(other, signing: Array(renewed.utf8)) }
    }

    func testOnlyTheSessionsOwnDeviceMayConfirmAndAWrongDeviceCostsNoAttempt() throws {
        let ticket = try keyTransfer()
        assertReason(.invalidParams) { _ = try confirm(ticket, device: "ipad-2") }
        assertReason(.invalidParams) { _ = try keyTransfer(key: "k-ipad", device: "ipad-2") }
        XCTAssertEqual(try store.keyChallenge(transferID: ticket.ticket.transfer.id)?.attemptsLeft, 3)
        XCTAssertEqual(try confirm(ticket).map(\.balanceMinor), [7_500, 2_500])
    }

    func testTheChallengeExpiresWithTheTransfer() throws {
        let ticket = try keyTransfer()
        clock.advance(seconds: service.settings.transferExpirySeconds)
        assertThrows(.expired) { _ = try confirm(ticket) }
        XCTAssertEqual(try store.transfer(id: ticket.ticket.transfer.id, userID: "u1")?.state, .expired)
        XCTAssertEqual(keys.checks, 0)
    }

    func testAKeyRevokedMeanwhileCannotConfirm() throws {
        let ticket = try keyTransfer()
        keys.revoke("iphone-1")
        assertReason(.notFound) { _ = try confirm(ticket) }
        XCTAssertEqual(try balance("u1", .checking), 10_000)
    }

    func testCodesAndSignaturesDoNotCrossOver() throws {
        let keyed = try keyTransfer()
        assertReason(.conflict) { _ = try service.confirm(userID: "u1", transferID: keyed.ticket.transfer.id, code: "123456", context: nil) }
        assertReason(.conflict) { _ = try transfer("u1", .checking, .saving, 2_500, key: "k-1") }
        let coded = try transfer("u1", .checking, .saving, 100, key: "k-sms")
        assertReason(.conflict) {
            _ = try service.confirmWithDeviceKey(
                userID: "u1", sessionDeviceID: "iphone-1", transferID: coded.id, deviceID: "iphone-1", signature: "AAAA", context: nil)
        }
        assertReason(.conflict) { _ = try keyTransfer(100, key: "k-sms") }
    }

    /// Confirms from threads of their own, all in flight at once: each answer as text.
    private func confirmAtOnce(_ count: Int, _ ticket: KeyTransferTicket, signatures: (Int) -> String) -> SharedList<String> {
        let answers = SharedList<String>()
        let service = self.service!
        let group = DispatchGroup()
        for index in 0..<count {
            let signature = signatures(index)
            group.enter()
            Thread {
                do {
                    let balances = try service.confirmWithDeviceKey(
                        userID: "u1", sessionDeviceID: "iphone-1", transferID: ticket.ticket.transfer.id, deviceID: "iphone-1",
                        signature: signature, context: nil)
                    answers.append("done " + balances.map { String($0.balanceMinor) }.joined(separator: " "))
                } catch {
                    answers.append("\(error)")
                }
                group.leave()
            }.start()
        }
        // Every confirm is held at its key check or answered: then all go on together.
        waitUntil("\(count) confirms held or answered") { keys.checks + answers.count >= count }
        keys.holdValid?.release()
        XCTAssertEqual(group.wait(timeout: .now() + 60), .success)
        return answers
    }

    func testTwentyConfirmsAtOnceWithTheDevicesSignatureAllAnswerDoneAndMoveTheMoneyOnce() throws {
        let ticket = try keyTransfer()
        let signature = Base64URL.encode(iPhone.signature(for: ticket.sign))
        keys.holdValid = Blocker()
        let answers = confirmAtOnce(20, ticket) { _ in signature }
        XCTAssertEqual(answers.all, Array(repeating: "done 7500 2500", count: 20), "a booked transfer is done for every valid signature")
        XCTAssertEqual(try store.keyChallenge(transferID: ticket.ticket.transfer.id)?.attemptsLeft, 3, "a valid signature is no attempt")
        XCTAssertEqual(try balance("u1", .checking), 7_500)
        XCTAssertEqual(try balance("u1", .saving), 2_500)
        try assertAuditClean()
    }

    func testTwentyWrongSignaturesAtOnceSpendTheThreeAttemptsAndNoMore() throws {
        let ticket = try keyTransfer()
        let forged = Base64URL.encode(P256PrivateKey().signature(for: ticket.sign))
        let answers = confirmAtOnce(20, ticket) { _ in forged }
        XCTAssertEqual(
            answers.all.sorted(),
            (["\(AccountsError.invalidSignature(attemptsLeft: 0))", "\(AccountsError.invalidSignature(attemptsLeft: 1))",
              "\(AccountsError.invalidSignature(attemptsLeft: 2))"] + Array(repeating: "\(AccountsError.tooManyAttempts)", count: 17)).sorted())
        let checked = keys.checks
        assertThrows(.tooManyAttempts) { _ = try confirm(ticket) }
        XCTAssertEqual(keys.checks, checked, "no signature is checked once the attempts are spent")
        XCTAssertEqual(try balance("u1", .checking), 10_000)
    }

    func testAValidSignatureCheckedWhileWrongOnesSpendTheLastAttemptBooksNothing() throws {
        let ticket = try keyTransfer()
        keys.holdValid = Blocker()
        let signature = Base64URL.encode(iPhone.signature(for: ticket.sign))
        let service = self.service!
        let answer = ResultBox<Result<[AccountBalance], any Error>>()
        let thread = Thread {
            answer.set(Result {
                try service.confirmWithDeviceKey(
                    userID: "u1", sessionDeviceID: "iphone-1", transferID: ticket.ticket.transfer.id, deviceID: "iphone-1",
                    signature: signature, context: nil)
            })
        }
        thread.start()
        XCTAssertTrue(keys.holdValid!.waitUntilHeld(1))
        let forged = Array(String(decoding: ticket.sign, as: UTF8.self).replacingOccurrences(of: "amount=2500", with: "amount=25").utf8)
        for left in [2, 1, 0] {
            assertThrows(.invalidSignature(attemptsLeft: left)) { _ = try confirm(ticket, signing: forged) }
        }
        keys.holdValid!.release()
        XCTAssertThrowsError(try answer.wait().get()) { error in
            XCTAssertEqual(error as? AccountsError, .tooManyAttempts, "the transfer failed for good before this booking")
        }
        XCTAssertEqual(try balance("u1", .checking), 10_000)
    }
}

/// The same device-key transfers on PostgreSQL, where parallel bookings conflict and are retried.
/// (Linux test discovery lists inherited tests only for a class that declares one of its own.)
final class DeviceKeyTransferOnPostgresTests: DeviceKeyTransferTests {
    override class var backend: TestBackend { .postgres }

    func testRunsOnPostgres() { XCTAssertEqual(store.database.dialect, .postgres) }
}
