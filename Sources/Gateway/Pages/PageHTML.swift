import Platform

/// The pages' HTML, rendered on the server: one layout, escaped text, forms that work without
/// JavaScript, and one same-origin stylesheet (the policy allows no inline style or script).
enum PageHTML {
    static func escape(_ text: String) -> String { text.htmlEscaped() }

    /// A whole page: `body` is HTML already escaped; `path` is where the language switch links.
    static func page(_ language: PageLanguage, title: String, path: String, body: String) -> String {
        let switcher = PageLanguage.allCases.map { other in
            other == language
                ? "<li><span aria-current=\"true\">\(other.ownName)</span></li>"
                : "<li><a href=\"\(escape(path))?lang=\(other.rawValue)\" hreflang=\"\(other.rawValue)\" lang=\"\(other.rawValue)\">\(other.ownName)</a></li>"
        }.joined()
        return """
            <!doctype html><html lang="\(language.rawValue)"><head><meta charset="utf-8">\
            <meta name="viewport" content="width=device-width, initial-scale=1"><title>\(escape(title))</title>\
            <link rel="stylesheet" href="\(stylesheetPath)"></head><body><main>\
            <h1>\(escape(title))</h1>\(body)</main>\
            <nav aria-label="\(escape(language.words.languageLabel))"><ul>\(switcher)</ul></nav></body></html>
            """
    }

    static func paragraph(_ text: String) -> String { "<p>\(escape(text))</p>" }

    /// A labelled field whose error, when there is one, is announced next to it.
    static func field(name: String, label: String, type: String, autocomplete: String, error: String?, hint: String? = nil) -> String {
        let describedBy = [hint.map { _ in "\(name)-hint" }, error.map { _ in "\(name)-error" }].compactMap { $0 }.joined(separator: " ")
        var html = "<div class=\"field\"><label for=\"\(name)\">\(escape(label))</label>"
        if let hint { html += "<p class=\"hint\" id=\"\(name)-hint\">\(escape(hint))</p>" }
        if let error { html += "<p class=\"error\" id=\"\(name)-error\" role=\"alert\">\(escape(error))</p>" }
        html += "<input id=\"\(name)\" name=\"\(name)\" type=\"\(type)\" autocomplete=\"\(autocomplete)\" required"
        if !describedBy.isEmpty { html += " aria-describedby=\"\(describedBy)\"" }
        if error != nil { html += " aria-invalid=\"true\"" }
        return html + "></div>"
    }

    /// A POST form to `action` carrying the per-form `csrf` token (none for a form whose only
    /// guard is the origin check: asking for a new reset link).
    static func form(action: String, csrf: String?, fields: String, submit: String) -> String {
        "<form method=\"post\" action=\"\(escape(action))\">" + (csrf.map { "<input type=\"hidden\" name=\"csrf\" value=\"\(escape($0))\">" } ?? "")
            + fields + "<button type=\"submit\">\(escape(submit))</button></form>"
    }

    static let stylesheetPath = "/pages.css"

    /// Readable from 320 px wide to a desktop; focus always visible for keyboard use.
    static let stylesheet = """
        *{box-sizing:border-box}body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1b1f24;background:#f4f5f7}
        main{max-width:30rem;margin:2rem auto;padding:1.5rem;background:#fff;border-radius:12px;box-shadow:0 1px 3px rgba(0,0,0,.12)}
        h1{font-size:1.5rem;line-height:1.25;margin:0 0 1rem}.field{margin:1rem 0}label{display:block;font-weight:600;margin-bottom:.25rem}
        input{width:100%;font:inherit;padding:.6rem .7rem;border:1px solid #8a939e;border-radius:8px}
        input[aria-invalid=true]{border-color:#b3261e}.hint{margin:.25rem 0;color:#4a525c;font-size:.9rem}
        .error{margin:.25rem 0;color:#b3261e;font-weight:600}button{font:inherit;font-weight:600;color:#fff;background:#1f5fbf;border:0;border-radius:8px;padding:.7rem 1.2rem;cursor:pointer;width:100%}
        :focus-visible{outline:3px solid #f2a900;outline-offset:2px}nav ul{list-style:none;display:flex;gap:1rem;justify-content:center;padding:0;margin:1rem}
        nav a{color:#1f5fbf}@media (max-width:400px){main{margin:0;border-radius:0;padding:1rem}}
        """
}
