import Dispatch
import Foundation
@testable import Identity
import LineProtocol
import Platform
import RPC
import Runtime
import Secrets
import TestSupport
import XCTest


/// The JSON face of the service: params in, results and error objects out, through the Router.
final class MethodTableTests: IdentityTestCase {
    var router: Router!
    var workers: WorkerPool!
    let logs = LogSink()

    override func setUpWithError() throws {
        try super.setUpWithError()
        workers = WorkerPool(threadCount: 2, maxQueued: 16, name: "identity-test")
        router = Router(workers: workers, metrics: Metrics())
        IdentityMethods.register(on: router, service: service)
    }

    override func tearDownWithError() throws {
        workers?.shutdownAndJoin()
        try super.tearDownWithError()
    }

    private func call(_ method: String, _ params: [String: JSON], client: String = "203.0.113.7") -> Result<JSON, RPCError> {
        let done = DispatchSemaphore(value: 0)
        let box = ResultBox<Result<JSON, RPCError>>()
        let context = CallContext(
            method: method, requestID: "test-1", client: client, logger: Logger(service: "identity", minimumLevel: .debug, sink: logs),
            deadlineMilliseconds: MonotonicClock.nowMilliseconds() + 10_000)
        router.dispatch(RPCRequest(method: method, params: .object(params), id: 1), context: context) { outcome in
            box.set(outcome)
            done.signal()
        }
        done.wait()
        return box.value!
    }

    private func result(_ method: String, _ params: [String: JSON], file: StaticString = #filePath, line: UInt = #line) throws -> JSON {
        switch call(method, params) {
        case .success(let json): return json
        case .failure(let error): XCTFail("\(method): \(error)", file: file, line: line); throw error
        }
    }

    private func reason(_ method: String, _ params: [String: JSON]) -> String? {
        if case .failure(let error) = call(method, params) { return error.reasonText }
        return nil
    }

    func testTheSeedFlowOverTheMethodTable() throws {
        let userID = try result("identity.register", ["username": "demo", "password": "correct horse battery", "email": "demo@example.com", "phone": "5555550100"])["user_id"]?.stringValue
        XCTAssertNotNil(userID)
        let login = try result("identity.login", ["username": "demo", "password": "correct horse battery", "device_id": "iphone-1"])
        XCTAssertEqual(login["aal"], 1)
        XCTAssertEqual(login["required_factors"], ["sms"])
        XCTAssertEqual(login["sitekey"], .null)
        let session = try XCTUnwrap(login["session"]?.stringValue)
        let introspected = try result("identity.introspect", ["session": .string(session)])
        XCTAssertEqual(introspected["user_id"]?.stringValue, userID)
        XCTAssertEqual(introspected["aal2_at"], .null)
        let sessionID = try XCTUnwrap(introspected["session_id"]?.stringValue)
        XCTAssertEqual(try result("identity.elevate", ["session_id": .string(sessionID), "factor": "sms"])["aal"], 2)
        let user = try result("identity.user", ["user_id": .string(userID!)])
        XCTAssertEqual(user["phone"], "+15555550100")
        XCTAssertEqual(user["sms_verification"], false)
        XCTAssertEqual(user["phone_verified"], false, "a registered phone is only a claim")
        XCTAssertEqual(reason("identity.prove_phone", ["user_id": .string(userID!), "phone": "+15555550199"]), "conflict")
        XCTAssertEqual(try result("identity.prove_phone", ["user_id": .string(userID!), "phone": "+15555550100"])["phone_verified"], true)
        XCTAssertEqual(try result("identity.user", ["user_id": .string(userID!)])["phone_verified"], true)

        let phone = FakeiPhone(deviceID: "iphone-1")
        let keyID = try result("identity.enroll_key", ["session": .string(session), "device_id": "iphone-1", "public_key": .string(phone.publicKeyBase64), "protection": "biometry"])["key_id"]
        let challenge = try XCTUnwrap(try result("identity.challenge", ["username": "demo", "device_id": "iphone-1"])["challenge"]?.stringValue)
        let keyLogin = try result("identity.key_login", ["username": "demo", "device_id": "iphone-1", "challenge": .string(challenge), "signature": .string(phone.sign(challenge))])
        XCTAssertEqual(keyLogin["aal"], 2)
        XCTAssertEqual(try result("identity.keys", ["session": .string(session)])["keys"]?.arrayValue?.first?["key_id"], keyID)

        let sessions = try XCTUnwrap(try result("identity.sessions", ["session": .string(session)])["sessions"]?.arrayValue)
        XCTAssertEqual(sessions.count, 2)
        XCTAssertFalse(String(decoding: JSON.array(sessions).encoded(), as: UTF8.self).contains(session.dropFirst(4)), "never the token")
        let other = try XCTUnwrap(sessions.first { $0["current"] == false }?["session_id"])
        XCTAssertEqual(try result("identity.revoke", ["session": .string(session), "session_id": other])["ok"], true)
        XCTAssertEqual(reason("identity.introspect", ["session": keyLogin["session"]!]), "unauthenticated")

        let png = Data([0x89, 0x50, 0x4E, 0x47, 1, 2]).base64EncodedString()
        XCTAssertEqual(try result("identity.preferences", ["session": .string(session), "sitekey": .string(png)])["sitekey"], .string(png))
        XCTAssertEqual(try result("identity.login", ["username": "demo", "password": "correct horse battery", "device_id": "iphone-1"])["sitekey"], .string(png))
        XCTAssertEqual(try result("identity.preferences", ["session": .string(session), "sitekey": .null])["sitekey"], .null)

        let activity = try result("identity.activity", ["session": .string(session), "limit": 3])
        XCTAssertEqual(activity["events"]?.arrayValue?.count, 3)
        XCTAssertNotEqual(activity["next"], .null)

        XCTAssertEqual(try result("identity.find_by_email", ["email": "Demo@Example.com"])["user_id"]?.stringValue, userID)
        XCTAssertEqual(try result("identity.check_password", ["user_id": .string(userID!), "password": "another fine phrase"])["ok"], true)
        XCTAssertEqual(try result("identity.record", ["user_id": .string(userID!), "event": "password.reset", "outcome": "ok"])["ok"], true)
        XCTAssertEqual(try result("identity.set_password", ["user_id": .string(userID!), "password": "another fine phrase"])["ok"], true)
        XCTAssertEqual(try result("identity.revoke_all", ["user_id": .string(userID!)])["revoked"], 2)
        XCTAssertEqual(reason("identity.logout", ["session": .string(session)]), "unauthenticated", "revoke_all ended it")
    }

    func testIntrospectionCarriesTheProvenPhoneOnlyWhenAskedAndOnlyOnceProved() throws {
        let userID = try XCTUnwrap(try result(
            "identity.register", ["username": "tara", "password": "correct horse battery", "email": "tara@example.com", "phone": "5555550123"]
        )["user_id"]?.stringValue)
        let session = try XCTUnwrap(try result("identity.login", ["username": "tara", "password": "correct horse battery", "device_id": "d1"])["session"])
        let asking: [String: JSON] = ["session": session, "with_proven_phone": true]

        XCTAssertNil(try result("identity.introspect", ["session": session])["proven_phone"], "not asked: not there")
        XCTAssertEqual(try result("identity.introspect", asking)["proven_phone"], .null, "a registered phone is only a claim")
        _ = try result("identity.prove_phone", ["user_id": .string(userID), "phone": "+15555550123"])
        XCTAssertEqual(try result("identity.introspect", asking)["proven_phone"], "+15555550123")
        try changePhone(of: userID, to: "+15555550142")
        XCTAssertEqual(try result("identity.introspect", asking)["proven_phone"], .null, "a changed phone is unproven again")
    }

    func testBadParamsAnswerInvalidParamsNamingTheField() throws {
        let cases: [(String, [String: JSON], String)] = [
            ("identity.register", ["username": "demo", "password": "x"], "email"),
            ("identity.register", ["username": 5, "password": "x", "email": "e", "phone": "p"], "username"),
            ("identity.login", ["username": "demo", "password": "correct horse battery"], "device_id"),
            ("identity.login", ["username": "demo", "password": .string(String(repeating: "p", count: 2000)), "device_id": "d"], "password"),
            ("identity.preferences", ["session": "lks_x", "sms_verification": "yes"], "sms_verification"),
            ("identity.preferences", ["session": "lks_x", "sitekey": 12], "sitekey"),
            ("identity.activity", ["session": "lks_x", "limit": 0], "limit"),
            ("identity.elevate", ["session_id": "ses_x"], "factor"),
            ("identity.challenge", ["username": "demo"], "device_id"),
        ]
        for (method, params, field) in cases {
            guard case .failure(let error) = call(method, params) else { XCTFail("\(method) accepted \(params)"); continue }
            XCTAssertEqual(error.reason, .invalidParams, "\(method) \(params)")
            XCTAssertEqual(error.data?["field"]?.stringValue, field, "\(method) \(params)")
            XCTAssertEqual(error.code, -32602)
        }
    }

    /// `{"sms_verifcation": false}` answered as if it worked and changed nothing.
    func testAMisspeltParameterIsRefusedNamingItAndChangesNothing() throws {
        try registerUser("demo")
        let session = try elevatedLogin("demo").session
        XCTAssertEqual(try result("identity.preferences", ["session": .string(session), "sms_verification": true])["sms_verification"], true)
        guard case .failure(let error) = call("identity.preferences", ["session": .string(session), "sms_verifcation": false]) else {
            return XCTFail("a misspelt parameter was accepted")
        }
        XCTAssertEqual(error.reason, .invalidParams)
        XCTAssertEqual(error.data?["field"], "sms_verifcation")
        XCTAssertEqual(error.data?["accepted"], ["locale", "session", "sitekey", "sms_verification"])
        XCTAssertEqual(try result("identity.preferences", ["session": .string(session)])["sms_verification"], true, "unchanged")
    }

    /// The unknown name is found before any work: no session lookup, no other field read first.
    func testEveryPublicMethodRefusesAnUnknownParameterFirst() throws {
        let methods = [
            "identity.register", "identity.login", "identity.logout", "identity.sessions", "identity.revoke", "identity.preferences",
            "identity.challenge", "identity.enroll_key", "identity.verify_key", "identity.key_login", "identity.keys",
            "identity.revoke_key", "identity.activity",
        ]
        for method in methods {
            guard case .failure(let error) = call(method, ["zz_typo": 1]) else { XCTFail("\(method) accepted zz_typo"); continue }
            XCTAssertEqual(error.reason, .invalidParams, method)
            XCTAssertEqual(error.data?["field"], "zz_typo", method)
        }
    }

    /// The HTTP door copies `Authorization: Bearer` into `session`: a method that takes none ignores it.
    func testASessionGivenToAMethodThatTakesNoneIsIgnored() throws {
        try registerUser("demo")
        let login = try result("identity.login", ["username": "demo", "password": "correct horse battery", "device_id": "iphone-1", "session": "lks_stale"])
        XCTAssertNotNil(login["session"]?.stringValue)
    }

    /// `identity.activity` had an integer cursor and `accounts.history` a string one.
    func testActivityPagesWithAnOpaqueStringCursor() throws {
        try registerUser("demo")
        let session = try elevatedLogin("demo").session
        for _ in 0..<4 { _ = try result("identity.preferences", ["session": .string(session), "sms_verification": true]) }
        let first = try result("identity.activity", ["session": .string(session), "limit": 2])
        let next = try XCTUnwrap(first["next"]?.stringValue, "next is a string")
        let second = try result("identity.activity", ["session": .string(session), "limit": 2, "before": .string(next)])
        XCTAssertEqual(eventIDs(second).count, 2)
        XCTAssertTrue(Set(eventIDs(first)).isDisjoint(with: eventIDs(second)), "the second page goes on where the first ended")
        for cursor: JSON in [12, "-1", "abc", ""] {
            guard case .failure(let error) = call("identity.activity", ["session": .string(session), "before": cursor]) else {
                XCTFail("\(cursor) accepted as a cursor"); continue
            }
            XCTAssertEqual(error.data?["field"], "before", "\(cursor)")
        }
    }

    /// Event ids and cursors were the audit table's sequence numbers: a user saw them jump with
    /// other users' events (the platform's volume), and any number was taken as a cursor.
    func testEventIDsAndCursorsAreSealedToTheirUser() throws {
        try registerUser("alice")
        try registerUser("bob", phone: "5555550101")
        let sessions = [try elevatedLogin("alice").session, try elevatedLogin("bob").session]
        for _ in 0..<3 {
            for session in sessions { _ = try result("identity.preferences", ["session": .string(session), "sms_verification": true]) }
        }
        let pages = try sessions.map { try result("identity.activity", ["session": .string($0), "limit": 2]) }
        for (session, page) in zip(sessions, pages) {
            let ids = eventIDs(page)
            XCTAssertEqual(ids.count, 2)
            for id in ids { XCTAssertNil(Int64(id), "event id \(id) is a sequence number") }
            XCTAssertNil(Int64(try XCTUnwrap(page["next"]?.stringValue)), "the cursor is a sequence number")
            XCTAssertEqual(eventIDs(try result("identity.activity", ["session": .string(session), "limit": 2])), ids, "an event keeps its id")
        }
        let (alice, aliceNext, bobNext) = (sessions[0], try XCTUnwrap(pages[0]["next"]), try XCTUnwrap(pages[1]["next"]))
        XCTAssertNoThrow(try result("identity.activity", ["session": .string(alice), "before": aliceNext]))
        let aliceCursor = try XCTUnwrap(aliceNext.stringValue)
        let tampered = String(aliceCursor.dropLast()) + (aliceCursor.hasSuffix("A") ? "B" : "A")
        let refused: [JSON] = [bobNext, "999999999", .string(tampered), .string(try XCTUnwrap(eventIDs(pages[0]).last))]
        for cursor in refused {
            guard case .failure(let error) = call("identity.activity", ["session": .string(alice), "before": cursor]) else {
                XCTFail("\(cursor) accepted as alice's cursor"); continue
            }
            XCTAssertEqual(error.reason, .invalidParams, "\(cursor)")
            XCTAssertEqual(error.data?["field"], "before", "\(cursor)")
        }
    }

    func testTheActivityPagesTogetherAreTheWholeTrail() throws {
        try registerUser("demo")
        try registerUser("other", phone: "5555550101")
        let session = try elevatedLogin("demo").session
        let other = try elevatedLogin("other").session
        for _ in 0..<4 {
            for each in [session, other] { _ = try result("identity.preferences", ["session": .string(each), "sms_verification": true]) }
        }
        let whole = eventIDs(try result("identity.activity", ["session": .string(session), "limit": 100]))
        XCTAssertGreaterThan(whole.count, 5)
        for limit in 1...3 {
            var pages: [String] = []
            var before: JSON = .null
            repeat {
                let page = try result("identity.activity", ["session": .string(session), "limit": .int(Int64(limit)), "before": before])
                pages += eventIDs(page)
                before = page["next"] ?? .null
            } while before != .null && pages.count <= whole.count
            XCTAssertEqual(pages, whole, "pages of \(limit)")
        }
    }

    private func eventIDs(_ page: JSON) -> [String] {
        (page["events"]?.arrayValue ?? []).map { $0["event_id"]?.stringValue ?? "not a string: \($0["event_id"] ?? .null)" }
    }

    /// `created_at` counts seconds and the tie was broken by a random id.
    func testSessionsMadeWithinOneSecondListNewestFirst() throws {
        try registerUser("demo")
        var made: [String] = []
        for device in 0..<8 { made.append(try login("demo", device: "phone-\(device)").sessionID) }
        let last = try elevatedLogin("demo", device: "phone-last")
        made.append(last.sessionID)
        let listed = try XCTUnwrap(try result("identity.sessions", ["session": .string(last.session)])["sessions"]?.arrayValue)
        XCTAssertEqual(Set(listed.compactMap { $0["created_at"]?.intValue }).count, 1, "one second (the clock stands still)")
        XCTAssertEqual(listed.compactMap { $0["session_id"]?.stringValue }, made.reversed())
    }

    func testErrorsCarryRetryAfterAndNoSecretsReachTheLogs() throws {
        _ = try result("identity.register", ["username": "demo", "password": "correct horse battery", "email": "demo@example.com", "phone": "5555550100"])
        for _ in 0..<5 { _ = call("identity.login", ["username": "demo", "password": "secret-guess-123", "device_id": "d1"]) }
        guard case .failure(let locked) = call("identity.login", ["username": "demo", "password": "correct horse battery", "device_id": "d1"]) else {
            return XCTFail("expected locked")
        }
        XCTAssertEqual(locked.reason, .locked)
        XCTAssertEqual(locked.code, 423)
        XCTAssertEqual(locked.data?["retry_after"], 30)
        let text = logs.capturedText
        XCTAssertTrue(text.contains("identity.login"))
        XCTAssertFalse(text.contains("secret-guess"))
        XCTAssertFalse(text.contains("correct horse"))
    }
}
