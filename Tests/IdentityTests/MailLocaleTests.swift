import Contract
import Delivery
import Foundation
import LineProtocol
import TestSupport
import XCTest

@testable import Identity

/// Account mails in the user's language: chosen at registration, changed in preferences, kept
/// for a deletion's last mail; every catalogue whole, with its own plurals.
final class MailLocaleTests: AccountLifeTestCase {
    private func register(locale: MailLocale) throws -> String {
        try service.register(
            .init(username: "alice", password: Self.password, email: "alice@example.com", phone: "5555550100", locale: locale), caller: caller)
    }

    func testRegistrationsLanguageWordsTheVerificationMailAndItsButton() throws {
        _ = try register(locale: .french)
        let mail = try XCTUnwrap(mails.all.last)
        XCTAssertEqual(mail.subject, "Confirmez votre adresse e-mail Latchkey")
        let token = try linkToken(to: "alice@example.com", "")
        XCTAssertTrue(mail.text.contains("\n\nlatchkey://verify-email?token=\(token)\n\n"), "the link is a paragraph of its own")
        XCTAssertTrue(mail.html?.contains("Confirmer cette adresse") ?? false, "the button in French")
        XCTAssertTrue(mail.html?.contains("<html lang=\"fr\">") ?? false, "mail readers and screen readers read it as French")
        XCTAssertEqual(try preferences(try elevatedLogin().session).locale, .french)
    }

    func testPreferencesChangeTheLanguageOfTheNextMail() throws {
        _ = try register(locale: .english)
        let session = try elevatedLogin()
        XCTAssertEqual(try service.preferences(token: session.session, smsVerification: nil, sitekey: nil, locale: .russian, caller: caller).locale, .russian)
        _ = try service.changePassword(token: session.session, currentPassword: Self.password, newPassword: "a much longer passphrase", caller: caller)
        XCTAssertEqual(mails.all.last?.subject, "Пароль Latchkey изменён")
    }

    func testADeletionsLastMailIsInTheLanguageTheAccountHad() throws {
        let userID = try register(locale: .russian)
        _ = try service.requestDeletion(token: try elevatedLogin().session, password: Self.password, caller: caller)
        for follower in ["accounts", "verification", "reset"] { _ = try service.erasureReported(service: follower, userID: userID, refusal: nil) }
        XCTAssertEqual(mails.all.last?.subject, "Ваш аккаунт Latchkey удалён")
    }

    func testEveryCatalogueWordsEveryMailInItsOwnLanguage() {
        let product = "Latchkey"
        for locale in MailLocale.allCases {
            let catalog = locale.catalog
            let link = catalog.linkLines(web: "https://bank.example/x?token=T", app: "latchkey://x?token=T")
            let words: [MailWords] = [
                catalog.verifyAddress(product: product, link: link, validFor: catalog.duration(seconds: 86_400)),
                catalog.registrationAttempt(product: product),
                catalog.passwordChanged(product: product, device: "iphone", at: "2026-12-04 18:20 UTC"),
                catalog.newDeviceSignIn(product: product, device: "iphone", client: "203.0.113.7", at: "2026-12-04 18:20 UTC"),
                catalog.phoneChanged(product: product, lastDigits: "42", device: "iphone", at: "2026-12-04 18:20 UTC", coolingOff: "3"),
                catalog.confirmAddressChange(product: product, link: link, validFor: "1"),
                catalog.addressInUse(product: product),
                catalog.addressChangeRefused(product: product, maskedNewAddress: "n***@example.org"),
                catalog.addressChangeRequested(product: product, maskedNewAddress: "n***@example.org", link: link, validFor: "7"),
                catalog.addressRestored(product: product),
                catalog.accountDeleted(product: product),
                catalog.recoveryCodeUsed(product: product, remaining: 1),
                catalog.recoveryCodeUsed(product: product, remaining: 5),
            ] + [FactorChange.authenticatorAdded, .authenticatorRemoved, .recoveryCodesGenerated, .deviceKeyAdded(protection: "biometry"),
                 .deviceKeyAdded(protection: "user_presence"), .deviceKeyRemoved, .phoneProven].map {
                catalog.factorChanged(product: product, change: $0, device: "iphone", at: "2026-12-04 18:20 UTC")
            }
            XCTAssertEqual(Set(words.map(\.text)).count, words.count, "\(locale): every mail its own words")
            for mail in words {
                XCTAssertFalse(mail.subject.isEmpty)
                XCTAssertTrue(mail.text.hasSuffix("\n\n\(product)"), "\(locale): \(mail.subject) ends with the product's name")
                if mail.linkLabel != nil {
                    XCTAssertTrue(mail.text.contains("\n\nhttps://bank.example/x?token=T\n\n"), "\(locale): \(mail.subject): the link its own paragraph")
                }
                if locale != .english {
                    XCTAssertFalse(mail.text.contains("Hello") || mail.text.contains(" the "), "\(locale): \(mail.subject) leaks English")
                }
            }
        }
    }

    func testTheContractOffersExactlyTheLanguagesWithACatalogue() {
        XCTAssertEqual(MailLocale.allCases.map(\.rawValue), Fields.mailLocales)
    }

    func testDurationsUseEachLanguagesPlurals() {
        let french = MailLocale.french.catalog, russian = MailLocale.russian.catalog
        XCTAssertEqual(french.duration(seconds: 5400), "1 heure et 30 minutes")
        XCTAssertEqual(french.duration(seconds: 86_400 * 7), "7 jours")
        let days = [31: "31 день", 2: "2 дня", 5: "5 дней", 11: "11 дней", 21: "21 день", 22: "22 дня", 14: "14 дней"]
        for (count, words) in days { XCTAssertEqual(russian.duration(seconds: Int64(count) * 86_400), words) }
        XCTAssertEqual(russian.duration(seconds: 3600 + 60), "1 час и 1 минута")
        XCTAssertEqual(russian.duration(seconds: 24 * 3600), "24 часа")
    }
}
