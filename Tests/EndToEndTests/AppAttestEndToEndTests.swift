import AppAttestTestSupport
import Foundation
import LineProtocol
import RPC
import Secrets
import StackLauncher
import TestSupport
import XCTest

/// `--require-app-attest` with every real executable: a key made with the `openssl` command
/// line, as the HTTP guide makes one, enrols but confirms no transfer; a key vouched for by an
/// App Attest key (the test's own CA in Apple's place, configured as the root) confirms one with
/// the app's assertion over the same bytes, once.
final class AppAttestEndToEndTests: StackTestCase {
    static let password = "correct horse battery"
    static let appID = "ABCDE12345.com.example.bank"
    private var authority: AppAttestAuthority!
    private var scratch: OpenSSLScratch!

    override func stackOptions(_ options: inout Stack.Options) {
        authority = try? AppAttestAuthority.shared()
        options.environment.merge(AppAttestAuthority.requiringEnvironment(appID: Self.appID, root: authority)) { _, required in required }
    }

    override func setUpWithError() throws {
        try super.setUpWithError()
        scratch = try OpenSSLScratch()
    }

    private func steppedUpSession(_ gateway: LineClient) throws -> JSON {
        _ = try gateway.result("identity.register", [
            "username": "ines", "password": .string(Self.password), "email": "ines@example.com", "phone": "+15555550143",
        ])
        let session = try XCTUnwrap(try appLogin(gateway, "ines", password: Self.password, device: "iphone-1")["session"])
        try passLoginFactor(gateway, session: session)
        let userID = try XCTUnwrap(try direct("identity").result("identity.introspect", ["session": session])["user_id"])
        _ = try direct("accounts").result("accounts.deposit", ["user_id": userID, "account": "checking", "amount": 10_000, "idempotency_key": "d-1"])
        return session
    }

    private func transfer(_ gateway: LineClient, _ session: JSON, key: String) throws -> JSON {
        try gateway.result("accounts.transfer", [
            "session": session, "from": "checking", "to": "saving", "amount": 100, "idempotency_key": .string(key),
            "confirm_with": "device_key", "device_id": "iphone-1",
        ])
    }

    func testAnOpensslKeyConfirmsNothingAndAnAttestedKeyWithItsAssertionConfirmsOnce() throws {
        let gateway = try gateway()
        let session = try steppedUpSession(gateway)

        // The guide's key: made and used with the openssl command line.
        try scratch.makeKey("key.pem", .p256)
        let point = Array(try scratch.publicKeyDER("key.pem").suffix(65))
        _ = try gateway.result("identity.enroll_key", [
            "session": session, "device_id": "iphone-1", "public_key": .string(Data(point).base64EncodedString()), "protection": "biometry",
        ])
        let first = try transfer(gateway, session, key: "t-1")
        try scratch.write(Base64URL.decode(first["sign"]?.stringValue ?? "") ?? [], to: "sign.bin")
        let forgedByScript = Data(try scratch.run(["dgst", "-sha256", "-sign", "key.pem", "sign.bin"]))
        let refused = assertError(
            try gateway.call("accounts.confirm", [
                "session": session, "transfer_id": first["transfer_id"]!, "device_id": "iphone-1",
                "signature": .string(forgedByScript.base64EncodedString()),
            ]), "not_found")
        XCTAssertEqual(refused?.data?["detail"], "app_attest_required")

        // The genuine app: a Secure Enclave key vouched for by its App Attest key.
        let phone = SimulatedDevice(id: "iphone-1")
        let app = AppAttestDevice(appID: Self.appID, authority: try XCTUnwrap(authority))
        let challenge = try XCTUnwrap(try gateway.result("identity.app_attest_challenge", ["session": session])["challenge"]?.stringValue)
        let clientDataHash = SHA256.hash((Base64URL.decode(challenge) ?? []) + phone.key.publicKey.x963)
        _ = try gateway.result("identity.enroll_key", [
            "session": session, "device_id": "iphone-1", "public_key": phone.publicKey, "protection": "biometry",
            "app_attest": [
                "key_id": .string(app.keyID), "attestation": .string(Data(try app.attest(clientDataHash: clientDataHash)).base64EncodedString()),
                "challenge": .string(challenge),
            ],
        ])
        XCTAssertEqual(
            try gateway.result("identity.keys", ["session": session])["keys"]?.arrayValue?.first?["app_attest"]?["app_id"]?.stringValue, Self.appID)
        let second = try transfer(gateway, session, key: "t-2")
        let sign = try XCTUnwrap(second["sign"])
        let assertion = JSON.string(Data(app.assert(clientData: Base64URL.decode(sign.stringValue ?? "") ?? [])).base64EncodedString())
        let confirm = { () throws -> RPCResponse in
            try gateway.call("accounts.confirm", [
                "session": session, "transfer_id": second["transfer_id"]!, "device_id": "iphone-1", "signature": phone.sign(sign),
                "app_attest_assertion": assertion,
            ])
        }
        let done = try confirm().outcome.get()
        XCTAssertEqual(done["status"], "done")
        XCTAssertEqual(done["accounts"]?.arrayValue?.map { $0["balance"] }, [9_900, 100])
        XCTAssertEqual(try confirm().outcome.get()["accounts"], done["accounts"], "a repeat moves nothing")
        XCTAssertEqual(try direct("accounts").result("accounts.audit", [:])["ok"], true)
    }
}
