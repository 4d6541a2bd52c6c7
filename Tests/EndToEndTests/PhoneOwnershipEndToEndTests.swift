import Foundation
import LineProtocol
import RPC
import StackLauncher
import XCTest

/// Phone ownership with every real process behind the gateway: Mallory registers with Alice's phone
/// number and asks for codes over and over. Alice, who proved the number, keeps getting hers;
/// Mallory gets only phone-proof codes, under their own small budget, and never learns anything
/// about Alice's requests.
final class PhoneOwnershipEndToEndTests: StackTestCase {
    override func stackOptions(_ options: inout Stack.Options) {
        // Every test client shares 127.0.0.1: lift the per-address budgets (each attacker has its own address).
        options.serviceEnvironment["gateway"] = ["LATCHKEY_RATE_LIMITS": "auth=0:1,codes=0:1,reset=0:1,default=0:1"]
        options.environment["LATCHKEY_VERIFICATION_SENDS_PER_CLIENT_10M"] = "1000"
    }

    private let number = "+15555550177"
    private let password = "an owner's long passphrase 7"

    private func register(_ gateway: LineClient, _ username: String) throws -> String {
        let registered = try gateway.result("identity.register", [
            "username": .string(username), "password": .string(password), "email": .string("\(username)@example.com"), "phone": .string(number),
        ])
        return try XCTUnwrap(registered["user_id"]?.stringValue)
    }

    private func login(_ gateway: LineClient, _ username: String, device: String) throws -> JSON {
        try gateway.result("identity.login", ["username": .string(username), "password": .string(password), "device_id": .string(device)])
    }

    func testAStrangerWhoClaimsTheOwnersNumberCannotBlockDrainOrLearnAboutTheOwnersCodes() throws {
        let gateway = try gateway()
        let alice = try register(gateway, "alice")
        let aliceFirst = try XCTUnwrap(try login(gateway, "alice", device: "alice-iphone")["session"]?.stringValue)
        XCTAssertEqual(try passSMSFactor(gateway, session: aliceFirst)["phone_verified"], true, "Alice's first code proves her number")

        // Mallory claims the same number and spends codes on it, cancelling each one.
        _ = try register(gateway, "mallory")
        let mallory = try XCTUnwrap(try login(gateway, "mallory", device: "mallory-phone")["session"]?.stringValue)
        var malloryAnswers: [String] = []
        var mallorySends = 0
        for _ in 0..<4 {
            let started = try gateway.call("verification.start", ["session": .string(mallory), "channel": "sms"])
            malloryAnswers.append(started.outcome.text)
            guard case .success(let result) = started.outcome, let id = result["request_id"]?.stringValue else { continue }
            mallorySends += 1
            XCTAssertEqual(result["purpose"], "phone_proof", "an unproven number gets only the proof code")
            _ = try gateway.result("verification.cancel", ["session": .string(mallory), "request_id": .string(id)])
        }
        XCTAssertEqual(mallorySends, 1, "the number's proof budget (2 in 10 minutes; Alice's own proof spent one)")
        let malloryLive = try gateway.call("verification.start", ["session": .string(mallory), "channel": "sms"])
        malloryAnswers.append(malloryLive.outcome.text)

        // Alice logs in on a new device: the SMS code still comes, and it is hers.
        let aliceLogin = try login(gateway, "alice", device: "alice-new-ipad")
        XCTAssertEqual(aliceLogin["required_factors"], ["sms"])
        let aliceSession = try XCTUnwrap(aliceLogin["session"]?.stringValue)
        let started = try gateway.call("verification.start", ["session": .string(aliceSession), "channel": "sms"])
        guard case .success(let aliceStart) = started.outcome, let aliceRequest = aliceStart["request_id"]?.stringValue else {
            return XCTFail("the owner's login code is blocked by a stranger: \(started.outcome.text)")
        }
        XCTAssertEqual(aliceStart["purpose"], "login")
        let checked = try gateway.result("verification.check", [
            "session": .string(aliceSession), "request_id": .string(aliceRequest), "code": .string(try code(for: aliceRequest)),
        ])
        XCTAssertEqual(checked, ["status": "verified", "aal": 2])

        // Her transfer gets its code too, and books.
        _ = try direct("accounts").result("accounts.deposit", [
            "user_id": .string(alice), "account": "checking", "amount": 10_000, "idempotency_key": "fund-alice",
        ])
        let ticket = try gateway.result("accounts.transfer", [
            "session": .string(aliceSession), "from": "checking", "to": "saving", "amount": 2_500, "idempotency_key": "alice-1",
        ])
        let transferRequest = try XCTUnwrap(ticket["request_id"]?.stringValue)
        let done = try gateway.result("accounts.confirm", [
            "session": .string(aliceSession), "transfer_id": ticket["transfer_id"]!, "code": .string(try code(for: transferRequest)),
        ])
        XCTAssertEqual(done["status"], "done")

        // Mallory gets no transaction code on the unproven number, and nothing names Alice's requests.
        let refused = try gateway.call("accounts.transfer", [
            "session": .string(mallory), "from": "checking", "to": "saving", "amount": 1, "idempotency_key": "mallory-1",
        ])
        guard case .failure = refused.outcome else { return XCTFail("a stranger's transfer sent a code to the owner's phone") }
        malloryAnswers.append(refused.outcome.text)
        malloryAnswers.append(try gateway.call("verification.start", ["session": .string(mallory), "channel": "sms"]).outcome.text)
        for answer in malloryAnswers {
            XCTAssertFalse(answer.contains(aliceRequest) || answer.contains(transferRequest), "a stranger saw the owner's request: \(answer)")
        }
        let toNumber = outbox().filter { $0["to"]?.stringValue == number }.count
        XCTAssertEqual(toNumber, 4, "Alice's proof, Mallory's one proof code, Alice's login and transfer codes")
    }

    func testAnUnprovenPhoneLogsInFromANewDeviceWithTheProofCode() throws {
        let gateway = try gateway()
        let userID = try register(gateway, "newcomer")
        let user = try direct("identity").result("identity.user", ["user_id": .string(userID)])
        XCTAssertEqual(user["phone_verified"], false)
        let first = try login(gateway, "newcomer", device: "first-phone")
        XCTAssertEqual(first["required_factors"], ["sms"], "the seed flow is unchanged: an SMS code")
        let session = try XCTUnwrap(first["session"]?.stringValue)
        let started = try gateway.result("verification.start", ["session": .string(session)])
        XCTAssertEqual(started["purpose"], "phone_proof")
        let requestID = try XCTUnwrap(started["request_id"]?.stringValue)
        let checked = try gateway.result("verification.check", [
            "session": .string(session), "request_id": .string(requestID), "code": .string(try code(for: requestID)),
        ])
        XCTAssertEqual(checked, ["status": "verified", "aal": 2, "phone_verified": true])
        XCTAssertEqual(try direct("identity").result("identity.user", ["user_id": .string(userID)])["phone_verified"], true)
        // From now on the number is a factor: the next login code is a plain login code.
        let again = try XCTUnwrap(try login(gateway, "newcomer", device: "second-phone")["session"]?.stringValue)
        XCTAssertEqual(try gateway.result("verification.start", ["session": .string(again)])["purpose"], "login")
    }
}

private extension Result where Success == JSON, Failure == RPCError {
    /// The whole answer as text, to search it for ids that must not be there.
    var text: String {
        switch self {
        case .success(let json): json.text
        case .failure(let error): "\(error.code) \(error.message) \(error.data?.text ?? "")"
        }
    }
}
