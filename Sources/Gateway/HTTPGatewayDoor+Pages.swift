import HTTP
import LineProtocol
import Secrets

/// The pages a mailed link opens in a browser when the app is not there: the password reset
/// form and the account's links (verify the address, confirm or undo its change). Each is
/// another client of the same methods (`reset.validate`, `reset.complete`, `reset.request`,
/// `identity.verify_email`, ...), never a second implementation of a rule.
///
/// The link's token leaves the address bar at once: the first visit stores it in an
/// `HttpOnly`, `SameSite=Strict` cookie and redirects to the bare path, so it never appears in
/// the rendered page, a referrer or the history. Every form carries a token derived from that
/// cookie (a cross-site page can neither send the cookie nor compute the token), and a POST
/// must come from this origin.
extension HTTPGatewayDoor {
    enum LinkPage: String, CaseIterable {
        case verifyEmail = "/verify-email"
        case confirmEmailChange = "/email-change/confirm"
        case revertEmailChange = "/email-change/revert"

        var method: String {
            switch self {
            case .verifyEmail: "identity.verify_email"
            case .confirmEmailChange: "identity.confirm_email_change"
            case .revertEmailChange: "identity.revert_email_change"
            }
        }
    }

    static let pageHeaders: [(String, String)] = [
        ("Content-Type", "text/html; charset=utf-8"),
        ("Content-Security-Policy", "default-src 'none'; style-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"),
        ("X-Frame-Options", "DENY"), ("Referrer-Policy", "no-referrer"),
    ]

    func handlePage(_ route: Route, _ request: HTTPRequest, context: HTTPRequestContext, reply: @escaping @Sendable (HTTPResponse) -> Void) {
        let query = FormBody.parse(request.query)
        let language = PageLanguage.of(acceptLanguage: request.headers["Accept-Language"], chosen: query["lang"])
        let path = route == .resetPage ? settings.resetPagePath : (route.linkPage?.rawValue ?? "/")
        if request.method != "POST", let token = query["token"] {
            // Into the cookie, out of the address bar.
            let location = path + (query["lang"].map { "?lang=\($0)" } ?? "")
            return reply(Self.redirect(to: location, setting: Self.linkCookie(token, request: request)))
        }
        let linkToken = FormBody.cookie(Self.linkCookieName(request), in: request.headers.values("Cookie"))
        if request.method == "POST" {
            guard Self.isSameOrigin(request) else { return reply(.error(403, reason: "cross_origin", "this form is only taken from its own pages")) }
            guard let form = FormBody.parse(request.body) else { return reply(.error(400, reason: "invalid_params", "the form is not valid UTF-8")) }
            if route == .resetNewLink { return requestNewLink(form, language, request, context, reply) }
            guard let linkToken, let csrf = form["csrf"], constantTimeEquals(Array(csrf.utf8), Array(Self.csrfToken(for: linkToken).utf8)) else {
                return reply(Self.render(language, path, broken: route == .resetPage))
            }
            if route == .resetPage { return completeReset(linkToken, form, language, path, request, context, reply) }
            guard let page = route.linkPage else { return reply(.error(404, reason: "not_found", "no such page")) }
            return useLink(page, linkToken, language, request, context, reply)
        }
        guard let linkToken else { return reply(Self.render(language, path, broken: route == .resetPage)) }
        guard route == .resetPage else {
            return reply(Self.linkForm(route.linkPage ?? .verifyEmail, language, csrf: Self.csrfToken(for: linkToken)))
        }
        call("reset.validate", params: JSON.object(["token": .string(linkToken)]), request: request, context: context) { outcome in
            switch outcome {
            case .success: reply(Self.resetForm(language, path, csrf: Self.csrfToken(for: linkToken), error: nil))
            case .failure(let error) where error.reason == .invalidToken: reply(Self.render(language, path, broken: true))
            case .failure: reply(Self.message(language, path, title: language.words.resetTitle, text: language.words.unavailable, status: 503))
            }
        }
    }

    // MARK: Password reset

    private func completeReset(
        _ token: String, _ form: [String: String], _ language: PageLanguage, _ path: String, _ request: HTTPRequest, _ context: HTTPRequestContext,
        _ reply: @escaping @Sendable (HTTPResponse) -> Void
    ) {
        let words = language.words
        let csrf = Self.csrfToken(for: token)
        guard let password = form["password"], form["password_again"] == password else {
            return reply(Self.resetForm(language, path, csrf: csrf, error: (field: "password_again", message: words.passwordsDiffer)))
        }
        call("reset.complete", params: JSON.object(["token": .string(token), "password": .string(password)]), request: request, context: context) { outcome in
            switch outcome {
            case .success:
                var done = Self.message(language, path, title: words.resetDoneTitle, text: words.resetDone)
                done.headers.add("Set-Cookie", Self.clearedLinkCookie(request))
                reply(done)
            case .failure(let error) where error.reason == .weakPassword:
                let rule = error.data?["rule"]?.stringValue ?? ""
                reply(Self.resetForm(language, path, csrf: csrf, error: (field: "password", message: words.passwordRules[rule] ?? error.message)))
            case .failure(let error) where error.reason == .invalidToken:
                reply(Self.render(language, path, broken: true))
            case .failure:
                reply(Self.message(language, path, title: words.resetTitle, text: words.unavailable, status: 503))
            }
        }
    }

    private func requestNewLink(
        _ form: [String: String], _ language: PageLanguage, _ request: HTTPRequest, _ context: HTTPRequestContext,
        _ reply: @escaping @Sendable (HTTPResponse) -> Void
    ) {
        let words = language.words
        let path = settings.resetPagePath
        guard let email = form["email"], !email.isEmpty else { return reply(Self.render(language, path, broken: true)) }
        call("reset.request", params: JSON.object(["email": .string(email)]), request: request, context: context) { outcome in
            switch outcome {
            case .success: reply(Self.message(language, path, title: words.newLinkSentTitle, text: words.newLinkSent))
            case .failure(let error) where error.reason == .invalidParams || error.reason == .rateLimited:
                reply(Self.render(language, path, broken: true, emailError: error.reason == .rateLimited ? words.unavailable : error.message))
            case .failure: reply(Self.message(language, path, title: words.linkBrokenTitle, text: words.unavailable, status: 503))
            }
        }
    }

    static func resetForm(_ language: PageLanguage, _ path: String, csrf: String, error: (field: String, message: String)?) -> HTTPResponse {
        let words = language.words
        let fields = PageHTML.field(
            name: "password", label: words.newPassword, type: "password", autocomplete: "new-password",
            error: error?.field == "password" ? error?.message : nil, hint: words.passwordHint)
            + PageHTML.field(
                name: "password_again", label: words.repeatPassword, type: "password", autocomplete: "new-password",
                error: error?.field == "password_again" ? error?.message : nil)
        let body = PageHTML.paragraph(words.resetIntro) + PageHTML.form(action: path, csrf: csrf, fields: fields, submit: words.resetSubmit)
        return page(PageHTML.page(language, title: words.resetTitle, path: path, body: body), status: error == nil ? 200 : 422)
    }

    /// The reset page for a link that does not work (or none), with the form for a new one;
    /// a link page says the same in its words.
    static func render(_ language: PageLanguage, _ path: String, broken reset: Bool, emailError: String? = nil) -> HTTPResponse {
        let words = language.words
        guard reset else { return message(language, path, title: words.linkBrokenTitle, text: words.accountLinkBroken, status: 400) }
        let fields = PageHTML.field(name: "email", label: words.emailLabel, type: "email", autocomplete: "email", error: emailError)
        let body = PageHTML.paragraph(words.linkBroken)
            + PageHTML.form(action: path + "/new", csrf: nil, fields: fields, submit: words.newLinkSubmit)
        return page(PageHTML.page(language, title: words.linkBrokenTitle, path: path, body: body), status: 400)
    }

    // MARK: The account's links

    private func useLink(
        _ page: LinkPage, _ token: String, _ language: PageLanguage, _ request: HTTPRequest, _ context: HTTPRequestContext,
        _ reply: @escaping @Sendable (HTTPResponse) -> Void
    ) {
        let words = language.words
        call(page.method, params: JSON.object(["token": .string(token)]), request: request, context: context) { outcome in
            switch outcome {
            case .success:
                let (title, text) = Self.done(page, words)
                var done = Self.message(language, page.rawValue, title: title, text: text)
                done.headers.add("Set-Cookie", Self.clearedLinkCookie(request))
                reply(done)
            case .failure(let error) where error.reason == .invalidToken || error.reason == .conflict:
                reply(Self.render(language, page.rawValue, broken: false))
            case .failure:
                reply(Self.message(language, page.rawValue, title: Self.titles(page, words).title, text: words.unavailable, status: 503))
            }
        }
    }

    static func linkForm(_ page: LinkPage, _ language: PageLanguage, csrf: String) -> HTTPResponse {
        let (title, intro, submit) = titles(page, language.words)
        let body = PageHTML.paragraph(intro) + PageHTML.form(action: page.rawValue, csrf: csrf, fields: "", submit: submit)
        return Self.page(PageHTML.page(language, title: title, path: page.rawValue, body: body), status: 200)
    }

    private static func titles(_ page: LinkPage, _ words: PageWords) -> (title: String, intro: String, submit: String) {
        switch page {
        case .verifyEmail: (words.verifyTitle, words.verifyIntro, words.verifySubmit)
        case .confirmEmailChange: (words.confirmChangeTitle, words.confirmChangeIntro, words.confirmChangeSubmit)
        case .revertEmailChange: (words.revertTitle, words.revertIntro, words.revertSubmit)
        }
    }

    private static func done(_ page: LinkPage, _ words: PageWords) -> (title: String, text: String) {
        switch page {
        case .verifyEmail: (words.verifyTitle, words.verifyDone)
        case .confirmEmailChange: (words.confirmChangeTitle, words.confirmChangeDone)
        case .revertEmailChange: (words.revertTitle, words.revertDone)
        }
    }

    // MARK: Pieces

    static func message(_ language: PageLanguage, _ path: String, title: String, text: String, status: Int = 200) -> HTTPResponse {
        page(PageHTML.page(language, title: title, path: path, body: PageHTML.paragraph(text)), status: status)
    }

    static func page(_ html: String, status: Int) -> HTTPResponse {
        var headers = HTTPHeaders()
        for (name, value) in pageHeaders { headers.set(name, value) }
        return HTTPResponse(status: status, headers: headers, body: Array(html.utf8))
    }

    static let stylesheetResponse = HTTPResponse(
        status: 200, headers: ["Content-Type": "text/css; charset=utf-8", "Cache-Control": "public, max-age=86400"], body: Array(PageHTML.stylesheet.utf8))

    private static func redirect(to location: String, setting cookie: String) -> HTTPResponse {
        var headers = HTTPHeaders()
        for (name, value) in pageHeaders where name != "Content-Type" { headers.set(name, value) }
        headers.set("Location", location)
        headers.add("Set-Cookie", cookie)
        return HTTPResponse(status: 303, headers: headers)
    }

    /// Derived from the link's secret, so it needs no state on any replica.
    static func csrfToken(for linkToken: String) -> String {
        Base64URL.encode(Array(SHA256.hash(Array("latchkey page form\n".utf8) + Array(linkToken.utf8)).prefix(18)))
    }

    /// `__Host-` (Secure, the whole origin, no domain) wherever the page is served by name;
    /// browsers keep a Secure cookie only from https, so on a loopback address, plain HTTP for
    /// development, the cookie goes without it.
    static func linkCookieName(_ request: HTTPRequest) -> String { isLoopback(request) ? "lk_link" : "__Host-lk_link" }

    private static func linkCookie(_ token: String, request: HTTPRequest) -> String {
        let value = token.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7f && $0 != UInt8(ascii: ";") && $0 != UInt8(ascii: ",") } ? token : ""
        return "\(linkCookieName(request))=\(value); Path=/; HttpOnly; SameSite=Strict; Max-Age=3600" + (isLoopback(request) ? "" : "; Secure")
    }

    private static func clearedLinkCookie(_ request: HTTPRequest) -> String {
        "\(linkCookieName(request))=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0" + (isLoopback(request) ? "" : "; Secure")
    }

    private static func isLoopback(_ request: HTTPRequest) -> Bool {
        let host = (request.headers["Host"] ?? "").lowercased()
        let name = host.hasPrefix("[") ? String(host.prefix { $0 != "]" }) + "]" : String(host.prefix { $0 != ":" })
        return name == "localhost" || name == "127.0.0.1" || name == "[::1]"
    }

    /// A POST from this origin: `Sec-Fetch-Site` says so when the browser sends it; else the
    /// `Origin`, when present, names this host.
    private static func isSameOrigin(_ request: HTTPRequest) -> Bool {
        if let site = request.headers["Sec-Fetch-Site"] { return site == "same-origin" || site == "none" }
        guard let origin = request.headers["Origin"] else { return true }
        let host = request.headers["Host"] ?? ""
        return origin == "https://\(host)" || origin == "http://\(host)"
    }
}

extension HTTPGatewayDoor.Route {
    var linkPage: HTTPGatewayDoor.LinkPage? {
        if case .linkPage(let page) = self { return page }
        return nil
    }
}
