import Dispatch
import FoundationEssentials
import LineProtocol
import Platform
import RPC
import StackLauncher
import Secrets
import WebAuthn

/// `passkey`: usernameless passkey sign-in through the gateway (login options, the client's
/// signature, `identity.passkey_login`), one user and one software authenticator per
/// connection, held to bare OpenSSL P-256 verifications on as many threads in the same run (the
/// check a sign-in adds), next to the bare SQLite commit rate (a sign-in commits four times:
/// the challenge issued, the challenge used, the counter, the session).
enum PasskeyBench {
    static let origin = "https://localhost"

    static func run(_ environment: BenchEnvironment, report: BenchReport) throws {
        let settings = environment.settings
        let stack = try environment.stack()
        let gateway = stack.gateway
        let identity = stack.endpoint("identity")
        let verifications = bareVerificationsPerSecond(threads: settings.connections, seconds: settings.seconds)
        report.ceiling("bare P-256 verify t=\(settings.connections)", perSecond: verifications)
        let ceiling = try CommitCeiling(probingIn: stack.options.dataDirectory + "/commit-probe")
        let flow = try environment.watched(["gateway", "identity"])
        let result = try LoadGenerator.closedLoop(settings: settings, watching: flow, prepare: { index in
            try enrolledAuthenticator(index: index, gateway: gateway, identity: identity)
        }) { user, _ in
            let (client, authenticator) = user
            let options = try client.result("identity.passkey_login_options", [:])
            guard let challenge = options["challenge"]?.stringValue.flatMap(Base64URL.decode) else {
                throw OutboxError(message: "passkey_login_options gave no challenge")
            }
            let signed = authenticator.assert(challenge: challenge)
            let login = try client.result("identity.passkey_login", [
                "credential": credential(authenticator, response: [
                    "clientDataJSON": .string(Base64URL.encode(signed.clientDataJSON)),
                    "authenticatorData": .string(Base64URL.encode(signed.authenticatorData)), "signature": .string(Base64URL.encode(signed.signature)),
                ]),
                "device_id": .string(BenchUser.deviceID),
            ])
            guard login["aal"] == 2 else { throw OutboxError(message: "passkey_login did not answer aal 2") }
        }
        _ = try ceiling.heldTo(report)
        report.row("passkey sign-in via gateway c=\(settings.connections)", result, ratioTo: ("bare verify", verifications))
    }

    /// A user with a recent step-up (through identity's internal `elevate`) and one passkey.
    private static func enrolledAuthenticator(index: Int, gateway: Endpoint, identity: Endpoint) throws -> (LineClient, SoftwareAuthenticator) {
        let (client, session, _) = try BenchUser.steppedUpSession(index: index, gateway: gateway, identity: identity)
        let authenticator = SoftwareAuthenticator(rpID: "localhost", origin: origin)
        let options = try client.result("identity.passkey_register_options", ["session": .string(session)])
        guard let challenge = options["challenge"]?.stringValue.flatMap(Base64URL.decode) else {
            throw OutboxError(message: "passkey_register_options gave no challenge")
        }
        let made = authenticator.register(challenge: challenge)
        _ = try client.result("identity.passkey_register", [
            "session": .string(session),
            "credential": credential(authenticator, response: [
                "clientDataJSON": .string(Base64URL.encode(made.clientDataJSON)), "attestationObject": .string(Base64URL.encode(made.attestationObject)),
            ]),
        ])
        return (client, authenticator)
    }

    private static func credential(_ authenticator: SoftwareAuthenticator, response: [String: JSON]) -> JSON {
        let id = JSON.string(Base64URL.encode(authenticator.credentialID))
        return ["id": id, "rawId": id, "type": "public-key", "response": .object(response)]
    }

    /// ECDSA P-256 verifications of one assertion-sized message per second on `threads` threads.
    private static func bareVerificationsPerSecond(threads: Int, seconds: Double) -> Double {
        let key = P256PrivateKey()
        let message = SecureRandom.bytes(37 + 32)
        let signature = key.signature(for: message)
        let counter = LoginBenchmark.Tally()
        let deadline = Date().addingTimeInterval(seconds)
        let group = DispatchGroup()
        let start = Date()
        for _ in 0..<threads {
            group.enter()
            _ = JoinableThread(name: "p256-bench") {
                while Date() < deadline {
                    precondition(key.publicKey.isValidSignature(der: signature, for: message))
                    counter.add()
                }
                group.leave()
            }
        }
        group.wait()
        return Double(counter.count) / Date().timeIntervalSince(start)
    }
}
