import Platform

/// The HTML alternative of a plain-text mail: the same words, escaped, a paragraph per blank
/// line, with one link (if any) as a button-like anchor after the paragraph that names it.
public enum MailHTML {
    /// `language`: the text's BCP 47 tag, so mail clients and screen readers read it as such.
    public static func paragraphs(_ text: String, language: String, title: String? = nil, link: (url: String, label: String)? = nil) -> String {
        var body: [String] = []
        for paragraph in text.components(separatedBy: "\n\n") {
            if let link, paragraph.split(whereSeparator: \.isWhitespace) == [Substring(link.url)] {
                body.append("<p><a href=\"\(escape(link.url))\" rel=\"noreferrer\">\(escape(link.label))</a></p>")
                body.append("<p style=\"color: #666; font-size: 90%\">\(escape(link.url))</p>")
            } else {
                body.append("<p>\(escape(paragraph))</p>")
            }
        }
        let head = "<meta charset=\"utf-8\"><meta name=\"referrer\" content=\"no-referrer\">" + (title.map { "<title>\(escape($0))</title>" } ?? "")
        return "<!DOCTYPE html>\n<html lang=\"\(escape(language))\"><head>\(head)</head>\n<body style=\"font-family: -apple-system, Helvetica, Arial, sans-serif; line-height: 1.5\">\n"
            + body.joined(separator: "\n") + "\n</body></html>"
    }

    public static func escape(_ text: String) -> String { text.htmlEscaped() }
}
