import XCTest

@testable import Identity

final class PasswordPolicyTests: XCTestCase {
    let policy = PasswordPolicy(breached: ["hunter2hunter2"])

    private func rule(_ password: String, username: String? = "alice", email: String? = "alice@example.com",
                      policy: PasswordPolicy? = nil) -> String? {
        do {
            try (policy ?? self.policy).check(password, username: username, email: email)
            return nil
        } catch {
            guard case .weakPassword(let rule, _) = error else { return "unexpected \(error)" }
            return rule
        }
    }

    func testAcceptsLongPassphrasesWithoutCompositionRules() {
        XCTAssertNil(rule("correct horse battery"))
        XCTAssertNil(rule("all lowercase words are fine"))
        XCTAssertNil(rule("пароль-кириллицей"))
        XCTAssertNil(rule(String(repeating: "xy1", count: 40) + "z"))
    }

    func testLengthIsCountedInCharacters() {
        XCTAssertEqual(rule("sh0rt"), "too_short")
        XCTAssertEqual(rule("ééééééé"), "too_short")
        XCTAssertNil(rule("éèêëēėęa"))
        XCTAssertEqual(rule(String(repeating: "a1b2", count: 32) + "c"), "too_long")
        XCTAssertEqual(rule("seven77", policy: PasswordPolicy(minimumLength: 8)), "too_short")
        XCTAssertNil(rule("short1", policy: PasswordPolicy(minimumLength: 6)))
    }

    func testRefusesTheUsernameAndEmail() {
        XCTAssertEqual(rule("my-Alice-rocks"), "contains_username")
        XCTAssertEqual(rule("xx alice@example.com", username: "zed"), "contains_email")
        XCTAssertEqual(rule("bob-smith-2024", username: "zed", email: "bob-smith@example.com"), "contains_email")
    }

    func testRefusesTrivialPasswords() {
        XCTAssertEqual(rule("aaaaaaaa"), "repetitive")
        XCTAssertEqual(rule("abababab"), "repetitive")
        XCTAssertEqual(rule("abcdabcdabcd"), "repetitive")
        XCTAssertEqual(rule("abcdefgh"), "sequence")
        XCTAssertEqual(rule("98765432"), "sequence")
        XCTAssertEqual(rule("qwertyuiop"), "sequence")
        XCTAssertEqual(rule("ASDFGHJKL"), "sequence")
        XCTAssertEqual(rule("Password1"), "common")
    }

    func testRefusesBreachedPasswordsCaseInsensitively() {
        XCTAssertEqual(rule("Hunter2Hunter2"), "breached")
    }

    func testLoadsTheOperatorsBreachedList() throws {
        let path = NSTemporaryDirectory() + "breached-\(UUID().uuidString).txt"
        defer { try? FileManager.default.removeItem(atPath: path) }
        try "# top guesses\nDragonfly99\n\n  monkeybusiness \n".write(toFile: path, atomically: true, encoding: .utf8)
        let list = try PasswordPolicy.loadBreachedList(path: path)
        XCTAssertEqual(list, ["dragonfly99", "monkeybusiness"])
        XCTAssertEqual(rule("dragonfly99", policy: PasswordPolicy(breached: list)), "breached")
    }

    func testWeakPasswordErrorsNameTheRuleOnTheWire() {
        let error = IdentityError.weakPassword(rule: "too_short", "password must have at least 8 characters").rpcError
        XCTAssertEqual(error.reason, .weakPassword)
        XCTAssertEqual(error.data?["rule"], "too_short")
        XCTAssertEqual(error.code, 422)
    }
}
