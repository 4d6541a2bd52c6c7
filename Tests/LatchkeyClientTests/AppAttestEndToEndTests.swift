import AppAttestTestSupport
import Foundation
import LatchkeyClient
import Secrets
import StackLauncher
import XCTest

/// App Attest through the client and the HTTP door, on a stack that requires it: the values
/// `DCAppAttestService` gives (key id, attestation, assertion) travel in the client's types, and
/// only then does the device key confirm money. The test's own CA stands in for Apple's.
final class AppAttestEndToEndTests: ClientStackTestCase {
    static let appID = "ABCDE12345.com.example.bank"
    private var authority: AppAttestAuthority?

    override func stackOptions(_ options: inout Stack.Options) {
        authority = try? AppAttestAuthority.shared()
        options.environment.merge(AppAttestAuthority.requiringEnvironment(appID: Self.appID, root: authority)) { _, required in required }
    }

    func testAnAttestedKeyConfirmsATransferWithItsAssertionAndAnUnattestedOneDoesNot() async throws {
        let client = try client()
        try await signInWithCode(client, deviceID: "iphone-1")
        let plain = SoftwareSigner(protection: .biometry)
        _ = try await client.enrollDeviceKey(deviceID: "iphone-1", signer: plain)
        let first = try await client.transfer(
            TransferRequest(from: .checking, to: .saving, amount: 100, idempotencyKey: "t-1", confirmWith: .deviceKey(deviceID: "iphone-1")))
        await XCTAssertThrowsLatchkeyError(.notFound(detail: "app_attest_required")) {
            try await client.confirmTransfer(first, deviceID: "iphone-1", signer: plain)
        }

        let signer = SoftwareSigner(protection: .biometry)
        let app = AppAttestDevice(appID: Self.appID, authority: try XCTUnwrap(authority))
        let challenge = try await client.send(LatchkeyClient.Identity.AppAttestChallenge())
        let attestation = try app.attest(clientDataHash: SHA256.hash([UInt8](challenge.challengeData) + [UInt8](signer.publicKeyX963())))
        _ = try await client.send(LatchkeyClient.Identity.EnrollKey(
            deviceID: "iphone-1", publicKey: signer.publicKeyX963(), protection: .biometry,
            appAttest: AppAttestProof(keyID: app.keyID, attestation: Data(attestation), challenge: challenge.challenge)))
        let keys = try await client.deviceKeys()
        XCTAssertEqual(keys.first?.appAttest?.appID, Self.appID)

        let second = try await client.transfer(
            TransferRequest(from: .checking, to: .saving, amount: 100, idempotencyKey: "t-2", confirmWith: .deviceKey(deviceID: "iphone-1")))
        let bytes = try XCTUnwrap(second.bytesToSign)
        let confirmed = try await client.send(LatchkeyClient.Accounts.Confirm(
            transferID: second.transferID, deviceID: "iphone-1", signature: signer.signature(for: bytes),
            appAttestAssertion: Data(app.assert(clientData: [UInt8](bytes)))))
        XCTAssertEqual(confirmed.status, "done")
    }
}
