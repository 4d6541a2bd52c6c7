import Foundation
import LatchkeyClient
import XCTest

/// Transfers confirmed by the device key instead of an SMS code: the client decodes `sign`,
/// the signer (a software P-256 key standing in for the Secure Enclave) signs those bytes, and
/// the DER signature books the transfer once, whatever the retries.
final class DeviceKeyTransferEndToEndTests: ClientStackTestCase {
    /// Signed in with the code on `iphone-1`, whose biometry key is enrolled.
    private func signedInWithKey(protection: KeyProtection = .biometry) async throws -> (LatchkeyClient, SoftwareSigner) {
        let client = try client()
        let signer = SoftwareSigner(protection: protection)
        try await signInWithCode(client, deviceID: "iphone-1")
        _ = try await client.enrollDeviceKey(deviceID: "iphone-1", signer: signer)
        return (client, signer)
    }

    private func keyTransfer(amount: Int64, key: String = UUID().uuidString) -> TransferRequest {
        TransferRequest(from: .checking, to: .saving, amount: amount, idempotencyKey: key, confirmWith: .deviceKey(deviceID: "iphone-1"))
    }

    func testTheSignedTransferBytesBookTheTransferWithoutAnSMSAndARepeatMovesNothing() async throws {
        let (client, signer) = try await signedInWithKey()
        // Only texts count: the mail about the new key may reach the outbox at any moment.
        let textsBefore = outbox().filter { $0["channel"]?.stringValue == "sms" }.count
        let request = keyTransfer(amount: 125_000)
        let transfer = try await client.transfer(request)
        XCTAssertEqual(transfer.status, "pending")
        XCTAssertEqual(transfer.confirmWith, "device_key")
        XCTAssertNil(transfer.requestID, "no code is started")
        let text = String(decoding: try XCTUnwrap(transfer.bytesToSign), as: UTF8.self)
        XCTAssertTrue(text.hasPrefix("latchkey-transfer-v1\n"), text)
        XCTAssertTrue(text.contains("\ntransfer_id=\(transfer.transferID)\namount=125000\n"), text)
        XCTAssertTrue(text.hasSuffix("\nchallenge=\(try XCTUnwrap(transfer.challenge))"), text)
        let retried = try await client.transfer(request)
        XCTAssertEqual(retried, transfer, "the same key answers the same transfer, challenge and bytes")

        let confirmed = try await client.confirmTransfer(transfer, deviceID: "iphone-1", signer: signer)
        XCTAssertEqual(confirmed.status, "done")
        XCTAssertEqual(confirmed.transferID, transfer.transferID)
        XCTAssertEqual(confirmed.accounts.map(\.balance), [375_000, 1_125_000])
        let again = try await client.confirmTransfer(transfer, deviceID: "iphone-1", signer: signer)
        XCTAssertEqual(again.accounts, confirmed.accounts, "a repeated confirm moves nothing")
        XCTAssertEqual(outbox().filter { $0["channel"]?.stringValue == "sms" }.count, textsBefore, "no SMS for a device-key transfer")
        let history = try await client.history(limit: 2)
        XCTAssertEqual(history.entries.map(\.transferID), [transfer.transferID, transfer.transferID])
        XCTAssertEqual(history.entries.map(\.kind), [.transfer, .transfer])
    }

    func testTenConcurrentConfirmsOfOneSignedTransferMoveTheMoneyOnce() async throws {
        let (client, signer) = try await signedInWithKey()
        let transfer = try await client.transfer(keyTransfer(amount: 10_000))
        let outcomes = await withTaskGroup(of: Result<[Account], LatchkeyError>.self) { group in
            for _ in 0..<10 {
                group.addTask {
                    do {
                        return .success(try await client.confirmTransfer(transfer, deviceID: "iphone-1", signer: signer).accounts)
                    } catch let error as LatchkeyError {
                        return .failure(error)
                    } catch {
                        return .failure(.network("\(error)"))
                    }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        // Each one is `done` with the one booking's balances, or a loser that saw the winner's
        // transaction still open (`conflict`), or one past the transfer's three signature checks.
        for outcome in outcomes {
            switch outcome {
            case .success(let accounts): XCTAssertEqual(accounts.map(\.balance), [490_000, 1_010_000])
            case .failure(.conflict), .failure(.tooManyAttempts): break
            case .failure(let error): XCTFail("unexpected \(error)")
            }
        }
        XCTAssertGreaterThanOrEqual(outcomes.filter { if case .success = $0 { true } else { false } }.count, 1)
        let after = try await client.balances()
        XCTAssertEqual(after.map(\.balance), [490_000, 1_010_000], "booked once")
    }

    func testSignaturesOverOtherBytesCountDownThenTheTransferIsOver() async throws {
        let (client, signer) = try await signedInWithKey()
        let transfer = try await client.transfer(keyTransfer(amount: 125_000))
        // A signer shown a doctored amount: its signature is good, over the wrong bytes.
        let doctored = DoctoringSigner(signer: signer, replace: "amount=125000", with: "amount=1")
        for left in [2, 1, 0] {
            await XCTAssertThrowsLatchkeyError(.invalidCode(attemptsLeft: left)) {
                try await client.confirmTransfer(transfer, deviceID: "iphone-1", signer: doctored)
            }
        }
        await XCTAssertThrowsLatchkeyError(.tooManyAttempts) { try await client.confirmTransfer(transfer, deviceID: "iphone-1", signer: signer) }
        let after = try await client.balances()
        XCTAssertEqual(after.map(\.balance), [500_000, 1_000_000])
    }

    func testAPasscodeKeyACodeAndAnotherDeviceAreRefused() async throws {
        let (client, signer) = try await signedInWithKey(protection: .userPresence)
        let transfer = try await client.transfer(keyTransfer(amount: 100))
        await XCTAssertThrowsLatchkeyError(.notFound(detail: "not_biometry")) {
            try await client.confirmTransfer(transfer, deviceID: "iphone-1", signer: signer)
        }
        await XCTAssertThrowsLatchkeyError(.conflict(field: nil, detail: nil, status: nil)) {
            try await client.confirmTransfer(transferID: transfer.transferID, code: "123456")
        }
        await XCTAssertThrowsLatchkeyError(.invalidParams(field: "device_id", rule: nil)) {
            try await client.transfer(TransferRequest(from: .checking, to: .saving, amount: 100, confirmWith: .deviceKey(deviceID: "ipad-1")))
        }
        // An SMS transfer has no bytes to sign: the client sends nothing.
        let smsTransfer = try await client.transfer(TransferRequest(from: .checking, to: .saving, amount: 100))
        await XCTAssertThrowsLatchkeyError(.invalidResponse(status: 200)) {
            try await client.confirmTransfer(smsTransfer, deviceID: "iphone-1", signer: signer)
        }
        XCTAssertEqual(try gatewayCount("accounts.confirm"), 2, "the refused SMS transfer's confirm was never sent")
    }
}

/// Signs a doctored copy of the bytes it is given, as a device that showed the person other text would.
private struct DoctoringSigner: DeviceKeySigner {
    let signer: SoftwareSigner
    let replace: String
    let with: String
    var protection: KeyProtection { signer.protection }
    func publicKeyX963() -> Data { signer.publicKeyX963() }
    func signature(for message: Data) -> Data {
        signer.signature(for: Data(String(decoding: message, as: UTF8.self).replacingOccurrences(of: replace, with: with).utf8))
    }
}
