import Delivery
import XCTest

@testable import Reset

final class ResetMailTests: XCTestCase {
    let token = "lkr_AbC-_0123456789abcdefghijklmnopqrstuvwxyzABC"

    func testDefaultTemplateIsTheAppDeepLink() throws {
        let template = try LinkTemplate(LinkTemplate.defaultTemplate)
        XCTAssertEqual(template.link(token: token), "latchkey://reset-password?token=\(token)")
    }

    func testUniversalLinksWork() throws {
        let template = try LinkTemplate("https://example.com/reset?token={token}&source=mail")
        XCTAssertEqual(template.link(token: token), "https://example.com/reset?token=\(token)&source=mail")
        let path = try LinkTemplate("https://example.com/reset/{token}")
        XCTAssertEqual(path.link(token: token), "https://example.com/reset/\(token)")
    }

    func testTheTokenIsPercentEncodedWhereItMustBe() throws {
        let template = try LinkTemplate("https://example.com/r?t={token}")
        XCTAssertEqual(template.link(token: "a+b/c=d&e f"), "https://example.com/r?t=a%2Bb%2Fc%3Dd%26e%20f")
    }

    func testBadTemplatesAreRefused() {
        for bad in ["https://example.com/reset", "{token}", "//example.com/?t={token}", "https://x/{token}/{token}", "https://ex ample.com/{token}", "1http://x/{token}"] {
            XCTAssertThrowsError(try LinkTemplate(bad), bad)
        }
    }

    func testExpiryInWords() {
        XCTAssertEqual(durationInWords(seconds: 1800), "30 minutes")
        XCTAssertEqual(durationInWords(seconds: 60), "1 minute")
        XCTAssertEqual(durationInWords(seconds: 45), "45 seconds")
        XCTAssertEqual(durationInWords(seconds: 3600), "1 hour")
        XCTAssertEqual(durationInWords(seconds: 5400), "1 hour and 30 minutes")
        XCTAssertEqual(durationInWords(seconds: 7200 + 60), "2 hours and 1 minute")
        XCTAssertEqual(durationInWords(seconds: 86_400 * 3), "3 days")
    }

    func testResetMailHasTheLinkTheExpiryAndWhatToDoIfItWasNotYou() throws {
        let composer = ResetMailComposer(productName: "Acme Bank", linkTemplate: try LinkTemplate("https://acme.example/reset?token={token}"))
        let message = composer.resetLink(to: "alice@example.com", token: token, validForSeconds: 1800)
        XCTAssertEqual(message.channel, .email)
        XCTAssertEqual(message.subject, "Reset your Acme Bank password")
        XCTAssertTrue(message.text.contains("https://acme.example/reset?token=\(token)"))
        XCTAssertTrue(message.text.contains("expires in 30 minutes"))
        XCTAssertTrue(message.text.contains("If you did not ask for this"))
        let html = try XCTUnwrap(message.html)
        XCTAssertTrue(html.contains("href=\"https://acme.example/reset?token=\(token)\""))
        XCTAssertTrue(html.contains("<strong>30 minutes</strong>"))
    }

    /// A custom-scheme link does nothing in a browser: the fallback line says where it works.
    func testTheFallbackLineSendsAnAppLinkToThePhoneAndAWebLinkToTheBrowser() throws {
        let app = try XCTUnwrap(ResetMailComposer(productName: "Acme Bank", linkTemplate: try LinkTemplate(LinkTemplate.defaultTemplate))
            .resetLink(to: "a@example.com", token: token, validForSeconds: 60).html)
        XCTAssertFalse(app.contains("browser"), app)
        XCTAssertTrue(app.contains("open this e-mail on the phone where the Acme Bank app is installed"), app)
        let web = try XCTUnwrap(ResetMailComposer(productName: "Acme Bank", linkTemplate: try LinkTemplate("https://acme.example/reset?token={token}"))
            .resetLink(to: "a@example.com", token: token, validForSeconds: 60).html)
        XCTAssertTrue(web.contains("copy this address into your browser"), web)
    }

    func testHTMLEscapesWhatItShows() throws {
        let composer = ResetMailComposer(productName: "<b>Evil & Co</b>", linkTemplate: try LinkTemplate("https://x.example/?a=1&t={token}"))
        let html = try XCTUnwrap(composer.resetLink(to: "a@example.com", token: token, validForSeconds: 60).html)
        XCTAssertFalse(html.contains("<b>Evil"))
        XCTAssertTrue(html.contains("&lt;b&gt;Evil &amp; Co&lt;/b&gt;"))
        XCTAssertTrue(html.contains("href=\"https://x.example/?a=1&amp;t=\(token)\""))
    }

    func testTheAccountsLanguageWordsBothMails() throws {
        let composer = ResetMailComposer(productName: "Acme Bank", linkTemplate: try LinkTemplate("https://acme.example/reset?token={token}"))
        let french = composer.resetLink(to: "a@example.com", locale: .french, token: token, validForSeconds: 5400)
        XCTAssertEqual(french.subject, "Réinitialisez votre mot de passe Acme Bank")
        XCTAssertTrue(french.text.contains("\n\nhttps://acme.example/reset?token=\(token)\n\n"), "the link its own paragraph")
        XCTAssertTrue(french.text.contains("expire dans 1 heure et 30 minutes"))
        let html = try XCTUnwrap(french.html)
        XCTAssertTrue(html.contains("<html lang=\"fr\">") && html.contains(">Choisir un nouveau mot de passe</a>"))
        XCTAssertTrue(html.contains("<strong>1 heure et 30 minutes</strong>"))

        let russian = composer.passwordChanged(to: "a@example.com", locale: .russian, removedFactors: ["totp"])
        XCTAssertEqual(russian.subject, "Пароль Acme Bank изменён")
        XCTAssertTrue(russian.text.contains("приложение-аутентификатор"))
        XCTAssertFalse(russian.text.contains("Hello"))
    }

    func testPasswordChangedMailSaysSessionsAndBiometricLoginsEnded() {
        let message = ResetMailComposer(linkTemplate: try! LinkTemplate(LinkTemplate.defaultTemplate)).passwordChanged(to: "alice@example.com")
        XCTAssertEqual(message.subject, "Your Latchkey password was changed")
        XCTAssertTrue(message.text.contains("Every device was signed out"))
        XCTAssertTrue(message.text.contains("biometric"))
        XCTAssertTrue(message.text.contains("no device is remembered"))
        XCTAssertNotNil(message.html)
    }
}
