import Contract
import LineProtocol
import XCTest

/// The declarations themselves: one per name, each well formed.
final class ContractTests: XCTestCase {
    func testEveryNameIsDeclaredOnceAndNamesItsService() {
        var seen = Set<String>()
        for method in Contract.methods {
            XCTAssertTrue(seen.insert(method.name).inserted, "\(method.name) is declared twice")
            XCTAssertTrue(method.service == "gateway" || Contract.services.contains(method.service), method.name)
        }
    }

    func testEveryFormNamesEachParameterAndResultMemberOnce() {
        for method in Contract.methods {
            for form in [method.form] + (method.internalForm.map { [$0] } ?? []) {
                XCTAssertEqual(Set(form.params.map(\.name)).count, form.params.count, method.name)
                if let result = form.result { XCTAssertEqual(Set(result.map(\.name)).count, result.count, method.name) }
            }
        }
    }

    func testOnlyPublicMethodsHaveAnInternalForm() {
        for method in Contract.methods where method.internalForm != nil {
            XCTAssertTrue(method.access.isPublic, method.name)
            XCTAssertTrue(method.form.params.contains { $0.name == "session" }, "\(method.name): the forms are told apart by session")
        }
    }

    func testAMethodsOwnLimitsAreChecked() {
        let login = IdentityContract.login.form
        XCTAssertThrowsError(try login.check(["username": .string(String(repeating: "u", count: 257)), "password": "b", "device_id": "d"], method: "m")) {
            XCTAssertEqual(($0 as? RPCError)?.message, "username is longer than 256 bytes")
        }
        let start = VerificationContract.start.internalForm!
        XCTAssertThrowsError(try start.check(["purpose": "login", "code_length": 0], method: "verification.start")) {
            XCTAssertEqual(($0 as? RPCError)?.message, "code_length must be between 4 and 10")
        }
        let transfer = AccountsContract.transfer.form
        XCTAssertThrowsError(try transfer.check(["from": "checking", "to": "saving", "amount": 5, "idempotency_key": ""], method: "accounts.transfer")) {
            XCTAssertEqual(($0 as? RPCError)?.message, "idempotency_key must not be empty")
        }
        XCTAssertNoThrow(try start.check(["purpose": "login", "code_length": 6, "payload": ["amount": 5]], method: "verification.start"))
    }

    func testTheFormIsChosenByTheSession() {
        let check = VerificationContract.check
        XCTAssertTrue(check.form(withSession: true).params.contains { $0.name == "session" })
        XCTAssertTrue(check.form(withSession: false).params.contains { $0.name == "payload" })
        XCTAssertThrowsError(try check.form(withSession: true).check(["session": "s", "request_id": "r", "code": "1", "payload": [:]], method: "m"))
    }

    func testAResultOutsideItsDeclarationIsFound() {
        let form = IdentityContract.register.form
        XCTAssertNil(form.resultProblem(["user_id": "u_1"]))
        XCTAssertNotNil(form.resultProblem([:]))
        XCTAssertNotNil(form.resultProblem(["user_id": "u_1", "username": "a"]))
        XCTAssertNotNil(form.resultProblem(["user_id": 1]))
        XCTAssertNil(IdentityContract.login.form.resultProblem([
            "session": "s", "session_id": "i", "aal": 1, "required_factors": ["sms"], "sitekey": .null,
        ]))
    }

    func testACallerThatDriftsFromTheDeclarationFailsBeforeSending() throws {
        XCTAssertThrowsError(try IdentityInternalContract.user.outgoingForm(["user_id": "u", "usr": "x"])) {
            XCTAssertEqual(($0 as? RPCError)?.reason, .internal)
            XCTAssertEqual(($0 as? RPCError)?.message, "call drift: identity.user: usr is not a parameter of identity.user")
        }
        // Without a session, verification's internal form is the one a service must fit.
        let start = try VerificationContract.start.outgoingForm(["purpose": "transaction", "user_id": "u", "channel": "sms"])
        XCTAssertTrue(start.params.contains { $0.name == "purpose" })
        XCTAssertThrowsError(try VerificationContract.start.outgoingForm(["purpose": "transaction", "code_expiry_s": 3600]))
    }

    func testAnAnswerOutsideTheDeclarationFailsTheCaller() {
        let form = IdentityInternalContract.revokeDevices.form
        XCTAssertThrowsError(try IdentityInternalContract.revokeDevices.checkedAnswer(["keys": 0, "devices": 0], of: form)) {
            XCTAssertEqual(($0 as? RPCError)?.reason, .internal)
        }
        XCTAssertNoThrow(try IdentityInternalContract.revokeDevices.checkedAnswer(["keys": 0, "device_tokens": 0, "removed_factors": []], of: form))
    }
}
