import Delivery
import LineProtocol
import XCTest

@testable import Verification

class WorkflowTests: VerificationTestCase {
    func testVoiceFollowsSmsAfterTheWaitWithAFreshCode() throws {
        let harness = try makeHarness()
        let id = try harness.start(workflow: .smsVoiceVoice) { $0.nextEventWaitSeconds = 60 }
        let smsCode = harness.code(id)
        harness.clock.advance(seconds: 59)
        XCTAssertEqual(harness.service.runDueSteps(logger: harness.logger), 0)
        XCTAssertEqual(harness.provider.sent.count, 1)
        harness.clock.advance(seconds: 1)
        XCTAssertEqual(harness.service.runDueSteps(logger: harness.logger), 1)
        let voice = try XCTUnwrap(harness.provider.sent.last)
        XCTAssertEqual(voice.channel, .voice)
        XCTAssertTrue(voice.text.contains("Again:"), voice.text)
        let voiceCode = harness.code(id)
        XCTAssertEqual(voiceCode.count, 6)
        if voiceCode != smsCode {
            XCTAssertVerificationError(.invalidCode(attemptsLeft: 2), try harness.check(id, smsCode), "only the newest code counts")
        }
        let result = try harness.check(id, voiceCode)
        XCTAssertEqual(result.channel, .voice)
        harness.clock.advance(seconds: 600)
        XCTAssertEqual(harness.service.runDueSteps(logger: harness.logger), 0, "a verified request fires nothing more")
    }

    func testNewCodeKeepsTheFailureCount() throws {
        let harness = try makeHarness()
        let id = try harness.start(workflow: .smsSMSVoice) { $0.nextEventWaitSeconds = 30 }
        XCTAssertVerificationError(.invalidCode(attemptsLeft: 2), try harness.check(id, wrong(harness.code(id))))
        XCTAssertVerificationError(.invalidCode(attemptsLeft: 1), try harness.check(id, wrong(harness.code(id))))
        harness.clock.advance(seconds: 30)
        harness.service.runDueSteps(logger: harness.logger)
        XCTAssertEqual(harness.provider.sent.count, 2)
        XCTAssertVerificationError(.tooManyAttempts, try harness.check(id, wrong(harness.code(id))))
    }

    func testNextFiresAtOnceAndNoFurtherChannelIsConflict() throws {
        let harness = try makeHarness()
        let id = try harness.start(workflow: .smsVoice) { $0.nextEventWaitSeconds = 120 }
        XCTAssertEqual(try harness.service.next(requestID: id, owner: nil, client: nil, logger: harness.logger), .voice)
        XCTAssertEqual(harness.provider.sent.last?.channel, .voice)
        XCTAssertVerificationError(
            .conflict("this workflow has no further channel", status: "pending"),
            try harness.service.next(requestID: id, owner: nil, client: nil, logger: harness.logger))
        harness.clock.advance(seconds: 200)
        XCTAssertEqual(harness.service.runDueSteps(logger: harness.logger), 0)
        _ = try harness.check(id, harness.code(id))
    }

    func testCancelStopsTheCodeAndTheWorkflow() throws {
        let harness = try makeHarness()
        let id = try harness.start(workflow: .smsVoiceVoice) { $0.nextEventWaitSeconds = 60 }
        XCTAssertEqual(try harness.service.cancel(requestID: id, owner: nil, logger: harness.logger), .cancelled)
        XCTAssertVerificationError(.conflict("this verification was cancelled", status: "cancelled"), try harness.check(id, harness.code(id)))
        XCTAssertVerificationError(
            .conflict("only a pending verification can be cancelled", status: "cancelled"),
            try harness.service.cancel(requestID: id, owner: nil, logger: harness.logger))
        harness.clock.advance(seconds: 120)
        XCTAssertEqual(harness.service.runDueSteps(logger: harness.logger), 0)
        XCTAssertEqual(harness.provider.sent.count, 1)
    }

    func testFailedVoiceStepIsRecordedAndTheSmsCodeStaysValid() throws {
        let harness = try makeHarness()
        let id = try harness.start(workflow: .smsVoice) { $0.nextEventWaitSeconds = 60 }
        let smsCode = harness.code(id)
        harness.provider.fail(.voice)
        harness.clock.advance(seconds: 60)
        harness.service.runDueSteps(logger: harness.logger)
        let status = try harness.service.status(requestID: id, owner: nil)
        let failure = status["events"]?.arrayValue?.last
        XCTAssertEqual(failure?["kind"], "delivery_failed")
        XCTAssertEqual(failure?["channel"], "voice")
        _ = try harness.check(id, smsCode)
    }

    func testWaitMustFitTheBounds() throws {
        let harness = try makeHarness { $0.minimumNextWaitSeconds = 60 }
        XCTAssertVerificationError(
            .invalidParams("next_event_wait_s must be between 60 and code_expiry_s (300)", field: "next_event_wait_s"),
            try harness.start(workflow: .smsVoice) { $0.nextEventWaitSeconds = 10 })
    }

    func testEmailOnlyWhenAllowedAndNeverForLogin() throws {
        let harness = try makeHarness()
        XCTAssertVerificationError(
            .invalidParams("the e-mail channel needs allow_email", field: "channel", rule: "email_not_allowed"),
            try harness.start(workflow: .email) { $0.email = "a@example.com" })
        XCTAssertVerificationError(
            .invalidParams("e-mail is not a second factor for login", field: "channel", rule: "email_not_a_login_factor"),
            try harness.start(workflow: .email, purpose: .login) {
                $0.email = "a@example.com"
                $0.allowEmail = true
            })
        let id = try harness.start(workflow: .email) {
            $0.number = nil
            $0.email = "a@example.com"
            $0.allowEmail = true
        }
        let message = try XCTUnwrap(harness.provider.sent.last)
        XCTAssertEqual(message.channel, .email)
        XCTAssertEqual(message.to, "a@example.com")
        XCTAssertEqual(message.subject, "Latchkey verification code")
        _ = try harness.check(id, harness.code(id))
    }

    /// The one e-mail rule registration uses: an address it would refuse gets no code either.
    func testAnAddressRegistrationWouldRefuseGetsNoCode() throws {
        let harness = try makeHarness()
        for address in ["a@example..com", "a@-bad.example", "a..b@example.com", "a@example", "a(b)@example.com"] {
            XCTAssertVerificationError(
                .invalidParams("email is required: an address", field: "email"),
                try harness.start(workflow: .email) {
                    $0.number = nil
                    $0.email = address
                    $0.allowEmail = true
                }, address)
        }
    }
}

class PayloadBindingTests: VerificationTestCase {
    let transfer: [String: JSON] = ["amount": 5000, "currency": "USD", "from": "checking", "to": "saving", "reference": "t_1"]

    func testMessageNamesTheTransferAndOnlyTheSamePayloadVerifies() throws {
        let harness = try makeHarness()
        let id = try harness.start { $0.payload = self.transfer }
        let text = try XCTUnwrap(harness.provider.sent.last?.text)
        let code = harness.code(id)
        XCTAssertEqual(text, "Latchkey: code \(code) to move 50.00 USD from checking to saving (t_1). It expires in 5 min. Never share it.")
        XCTAssertVerificationError(.invalidCode(attemptsLeft: 2), try harness.check(id, code), "a missing payload is a wrong code")
        var changed = transfer
        changed["amount"] = 5001
        XCTAssertVerificationError(.invalidCode(attemptsLeft: 1), try harness.check(id, code, payload: .object(changed)))
        // Same members in another order: canonical JSON makes them equal.
        let reordered = JSON.object(Dictionary(uniqueKeysWithValues: transfer.reversed()))
        _ = try harness.check(id, code, payload: reordered)
    }

    func testPayloadOnAnUnboundRequestIsAWrongCode() throws {
        let harness = try makeHarness()
        let id = try harness.start()
        XCTAssertVerificationError(.invalidCode(attemptsLeft: 2), try harness.check(id, harness.code(id), payload: .object(transfer)))
        let status = try harness.service.status(requestID: id, owner: nil)
        XCTAssertEqual(status["events"]?.arrayValue?.last?["detail"], "payload")
    }

    func testACodeForOneTransferNeverConfirmsAnother() throws {
        let harness = try makeHarness()
        let first = try harness.start(number: "+15555550100") { $0.payload = self.transfer }
        var other = transfer
        other["reference"] = "t_2"
        let second = try harness.start(number: "+15555550101") { $0.payload = other }
        XCTAssertVerificationError(.invalidCode(attemptsLeft: 2), try harness.check(second, harness.code(first), payload: .object(self.transfer)))
    }

    func testLocalesWordTheTransfer() {
        let summary = PayloadSummary(transfer)
        XCTAssertEqual(MessageCatalog.describe(summary, locale: .french), "pour virer 50,00 USD du compte courant vers le compte épargne (t_1)")
        XCTAssertEqual(MessageCatalog.describe(summary, locale: .russian), "для перевода 50,00 USD с текущего счёта на сберегательный счёт (t_1)")
        let jpy = PayloadSummary(["amount": 5000, "currency": "JPY", "from": "checking", "to": "saving"])
        XCTAssertEqual(MessageCatalog.describe(jpy, locale: .english), "to move 5000 JPY from checking to saving")
        let fr = MessageCatalog.message(channel: .sms, code: "123456", brand: "Banque", locale: .french, expiryMinutes: 5, payload: nil)
        XCTAssertEqual(fr.text, "Banque : votre code est 123456. Il expire dans 5 min. Ne le communiquez jamais.")
        let ru = MessageCatalog.message(channel: .voice, code: "1234", brand: "Банк", locale: .russian, expiryMinutes: 5, payload: nil)
        XCTAssertEqual(ru.text, "Это Банк. Ваш код: 1, 2, 3, 4. Повторяю: 1, 2, 3, 4.")
    }

    func testBrandAndLocaleFromTheStart() throws {
        let harness = try makeHarness()
        let id = try harness.start {
            $0.brand = "Acme Bank"
            $0.locale = .russian
        }
        XCTAssertEqual(harness.provider.sent.last?.text, "Acme Bank: ваш код \(harness.code(id)). Он действует 5 мин. Никому его не сообщайте.")
    }
}

class SendLimitTests: VerificationTestCase {
    func testPerNumberLimitWithRetryAfter() throws {
        let harness = try makeHarness()
        for _ in 0..<3 {
            let id = try harness.start()
            _ = try harness.service.cancel(requestID: id, owner: nil, logger: harness.logger)
            harness.clock.advance(seconds: 10)
        }
        XCTAssertVerificationError(.rateLimited(retryAfterSeconds: 570, scope: "number"), try harness.start())
        XCTAssertEqual(harness.provider.sent.count, 3)
        harness.clock.advance(seconds: 570)
        _ = try harness.start()
    }

    func testPerUserPerClientAndGlobalBudgets() throws {
        let harness = try makeHarness {
            $0.perUser = [SendLimit(count: 2, windowSeconds: 600)]
            $0.perClient = [SendLimit(count: 2, windowSeconds: 600)]
            $0.global = [SendLimit(count: 5, windowSeconds: 3600)]
        }
        _ = try harness.start(number: "+15555550101") { $0.userID = "u_1"; $0.provenNumber = $0.number }
        _ = try harness.start(number: "+15555550102") { $0.userID = "u_1"; $0.provenNumber = $0.number }
        XCTAssertVerificationError(.rateLimited(retryAfterSeconds: 600, scope: "user"), try harness.start(number: "+15555550103") { $0.userID = "u_1"; $0.provenNumber = $0.number })
        _ = try harness.start(number: "+15555550104") { $0.client = "10.0.0.1" }
        _ = try harness.start(number: "+15555550105") { $0.client = "10.0.0.1" }
        XCTAssertVerificationError(.rateLimited(retryAfterSeconds: 600, scope: "client"), try harness.start(number: "+15555550106") { $0.client = "10.0.0.1" })
        _ = try harness.start(number: "+15555550107") { $0.client = "10.0.0.2" }
        XCTAssertVerificationError(.rateLimited(retryAfterSeconds: 3600, scope: "global"), try harness.start(number: "+15555550108") { $0.client = "10.0.0.3" })
    }

    func testNextCountsAgainstTheNumberLimit() throws {
        let harness = try makeHarness { $0.perNumber = [SendLimit(count: 2, windowSeconds: 600)] }
        let id = try harness.start(workflow: .smsSMSVoice) { $0.nextEventWaitSeconds = 60 }
        _ = try harness.service.next(requestID: id, owner: nil, client: nil, logger: harness.logger)
        XCTAssertVerificationError(
            .rateLimited(retryAfterSeconds: 600, scope: "number"), try harness.service.next(requestID: id, owner: nil, client: nil, logger: harness.logger))
    }
}

class BudgetTests: VerificationTestCase {
    func testTimedStepBeyondTheGlobalBudgetIsSkippedNotSent() throws {
        let harness = try makeHarness { $0.global = [SendLimit(count: 1, windowSeconds: 3600)] }
        let id = try harness.start(workflow: .smsVoiceVoice) { $0.nextEventWaitSeconds = 60 }
        let smsCode = harness.code(id)
        harness.clock.advance(seconds: 60)
        harness.service.runDueSteps(logger: harness.logger)
        XCTAssertEqual(harness.provider.sent.count, 1, "nothing sent past the budget")
        let status = try harness.service.status(requestID: id, owner: nil)
        XCTAssertEqual(status["events"]?.arrayValue?.last?["kind"], "skipped")
        XCTAssertEqual(status["step"], 2)
        _ = try harness.check(id, smsCode)
    }
}
