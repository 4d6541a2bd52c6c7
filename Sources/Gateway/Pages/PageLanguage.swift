/// The language of a page: the `lang` the person chose on the page, else the first of the
/// browser's `Accept-Language` ranges that has a catalogue, else English.
enum PageLanguage: String, CaseIterable, Sendable {
    case en, fr, ru

    static func of(acceptLanguage: String?, chosen: String?) -> PageLanguage {
        if let chosen, let language = PageLanguage(rawValue: chosen) { return language }
        let ranges = (acceptLanguage ?? "").split(separator: ",").compactMap { part -> (String, Double)? in
            let pieces = part.split(separator: ";")
            guard let tag = pieces.first?.trimmingHTTPWhitespace().lowercased(), !tag.isEmpty else { return nil }
            let quality = pieces.dropFirst().lazy.compactMap { piece -> Double? in
                let text = piece.trimmingHTTPWhitespace()
                return text.hasPrefix("q=") ? Double(text.dropFirst(2)) : nil
            }.first ?? 1
            return (String(tag.prefix { $0 != "-" }), quality)
        }
        let best = ranges.filter { $0.1 > 0 }.enumerated().sorted { ($0.element.1, -$0.offset) > ($1.element.1, -$1.offset) }
        return best.lazy.compactMap { PageLanguage(rawValue: $0.element.0) }.first ?? .en
    }

    /// Each language by its own name, for the switch on every page.
    var ownName: String {
        switch self {
        case .en: "English"
        case .fr: "Français"
        case .ru: "Русский"
        }
    }

    var words: PageWords {
        switch self {
        case .en: .english
        case .fr: .french
        case .ru: .russian
        }
    }
}
