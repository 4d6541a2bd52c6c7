import Foundation
import LineProtocol
import RPC
import Secrets
import TestSupport
import WebAuthn
import XCTest

/// Passkeys on PostgreSQL with two identity replicas behind the gateway: one assertion sent 20
/// times at once signs in once, and of two assertions of one counting authenticator the older,
/// sent last, is refused as a counter that went backwards, whichever replica takes each.
final class PostgresPasskeyEndToEndTests: PostgresStackTestCase {
    override var replicas: [String: Int] { ["identity": 2] }

    private func credential(_ authenticator: SoftwareAuthenticator, _ response: [String: JSON]) -> JSON {
        let id = JSON.string(Base64URL.encode(authenticator.credentialID))
        return ["id": id, "rawId": id, "type": "public-key", "response": .object(response)]
    }

    private func loginOptionsChallenge() throws -> [UInt8] {
        try XCTUnwrap(try gateway().result("identity.passkey_login_options")["challenge"]?.stringValue.flatMap(Base64URL.decode))
    }

    private func login(_ authenticator: SoftwareAuthenticator, challenge: [UInt8]) -> JSON {
        let signed = authenticator.assert(challenge: challenge)
        return [
            "device_id": "laptop",
            "credential": credential(authenticator, [
                "clientDataJSON": .string(Base64URL.encode(signed.clientDataJSON)), "authenticatorData": .string(Base64URL.encode(signed.authenticatorData)),
                "signature": .string(Base64URL.encode(signed.signature)),
            ]),
        ]
    }

    private func registeredAuthenticator() throws -> SoftwareAuthenticator {
        let client = try gateway()
        _ = try client.result("identity.register", [
            "username": "petra", "password": "correct horse battery", "email": "petra@example.com", "phone": "+15555550101",
        ])
        let session = try XCTUnwrap(try client.result("identity.login", [
            "username": "petra", "password": "correct horse battery", "device_id": "phone",
        ])["session"])
        let sessionID = try direct("identity").result("identity.introspect", ["session": session])["session_id"] ?? .null
        _ = try direct("identity", replica: 1).result("identity.elevate", ["session_id": sessionID, "factor": "sms"])
        let authenticator = SoftwareAuthenticator(rpID: "localhost", origin: "https://localhost", countsSignatures: true)
        let options = try client.result("identity.passkey_register_options", ["session": session])
        let made = authenticator.register(challenge: try XCTUnwrap(options["challenge"]?.stringValue.flatMap(Base64URL.decode)))
        _ = try client.result("identity.passkey_register", [
            "session": session,
            "credential": credential(authenticator, [
                "clientDataJSON": .string(Base64URL.encode(made.clientDataJSON)), "attestationObject": .string(Base64URL.encode(made.attestationObject)),
            ]),
        ])
        return authenticator
    }

    func testOneAssertionSentTwentyTimesAcrossTwoReplicasSignsInOnceAndAnOlderCounterIsRefused() throws {
        let authenticator = try registeredAuthenticator()
        let params = login(authenticator, challenge: try loginOptionsChallenge())
        let outcomes = Tally()
        let gatewayEndpoint = stack.gateway
        DispatchQueue.concurrentPerform(iterations: 20) { _ in
            do {
                switch try LineClient(gatewayEndpoint).call("identity.passkey_login", params).outcome {
                case .success(let result): outcomes.record(result["aal"] == 2 ? "aal2" : "other")
                case .failure(let error): outcomes.record(error.data?["detail"]?.stringValue ?? error.reasonText ?? "no reason")
                }
            } catch {
                outcomes.record("unexpected: \(error)")
            }
        }
        XCTAssertEqual(outcomes.counts, ["aal2": 1, "used": 19])
        for replica in 0..<2 {
            let metrics = try direct("identity", replica: replica).result("identity.metrics")
            XCTAssertGreaterThan(metrics["methods"]?["identity.passkey_login"]?["count"]?.intValue ?? 0, 0, "replica \(replica) took some")
        }

        let older = login(authenticator, challenge: try loginOptionsChallenge())
        let newer = login(authenticator, challenge: try loginOptionsChallenge())
        XCTAssertEqual(try direct("identity", replica: 0).result("identity.passkey_login", newer)["aal"], 2)
        let refused = try direct("identity", replica: 1).call("identity.passkey_login", older)
        guard case .failure(let error) = refused.outcome else { return XCTFail("an older counter signed in") }
        XCTAssertEqual(error.data?["detail"], "counter_regressed")
        XCTAssertEqual(try database.sql("SELECT COUNT(*) FROM identity.passkeys WHERE flagged_at IS NOT NULL"), "1")
    }
}
