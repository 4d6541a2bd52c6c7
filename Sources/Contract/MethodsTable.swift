/// A service's methods as a Markdown table for its page in protocol/, written from the
/// declarations like methods.json, so the page cannot drift from the code. A page holds it
/// between `<!-- methods table: <service> -->` and `<!-- end methods table -->`.
public enum MethodsTable {
    public static func begin(_ service: String) -> String { "<!-- methods table: \(service) -->" }
    public static let end = "<!-- end methods table -->"

    public static func markdown(service: String) -> String {
        var lines = ["| method | access | params | result | errors |", "|---|---|---|---|---|"]
        for method in Contract.methods where method.service == service {
            lines.append(row(method.name, method.access.rawValue, method.form))
            if let internalForm = method.internalForm { lines.append(row(method.name, "internal (no `session`)", internalForm)) }
        }
        return lines.joined(separator: "\n")
    }

    private static func row(_ name: String, _ access: String, _ form: MethodContract.Form) -> String {
        let params = names(form.params)
        let result = form.result.map { $0.isEmpty ? "—" : "`\(names($0))`" } ?? "any members"
        let errors = form.errors.isEmpty ? "—" : form.errors.map { "`\($0.rawValue)`" }.joined(separator: ", ")
        return "| `\(name)` | \(access.replacingUnderscores) | \(params.isEmpty ? "—" : "`\(params)`") | \(result) | \(errors) |"
    }

    /// `a, b, c?`: optional members end in `?`.
    private static func names(_ members: [Member]) -> String {
        members.map { $0.isRequired ? $0.name : $0.name + "?" }.joined(separator: ", ")
    }

    /// The page with its table section replaced by `markdown(service:)`; nil when it has none.
    public static func page(_ text: String, service: String) -> String? {
        guard let start = text.firstRange(of: begin(service)), let stop = text[start.upperBound...].firstRange(of: end) else { return nil }
        let before = String(text[..<start.upperBound])
        let after = String(text[stop.lowerBound...])
        return before + "\n" + markdown(service: service) + "\n" + after
    }
}

extension String {
    fileprivate var replacingUnderscores: String { String(map { $0 == "_" ? "-" : $0 }) }
}
