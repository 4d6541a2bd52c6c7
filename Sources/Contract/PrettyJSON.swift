import LineProtocol

/// JSON as people read it in the repository: two-space indents, members sorted by name, one
/// value a line, a final newline. The same value always gives the same text, so a generated
/// document can be compared byte for byte with the committed one.
public enum PrettyJSON {
    public static func text(_ value: JSON) -> String {
        var out = ""
        write(value, indent: "", to: &out)
        return out + "\n"
    }

    private static func write(_ value: JSON, indent: String, to out: inout String) {
        let inner = indent + "  "
        switch value {
        case .array(let items) where !items.isEmpty:
            out += "[\n"
            for (index, item) in items.enumerated() {
                out += inner
                write(item, indent: inner, to: &out)
                out += index == items.count - 1 ? "\n" : ",\n"
            }
            out += indent + "]"
        case .object(let members) where !members.isEmpty:
            out += "{\n"
            let sorted = members.sorted { $0.key < $1.key }
            for (index, member) in sorted.enumerated() {
                out += inner + String(decoding: JSON.string(member.key).encoded(), as: UTF8.self) + ": "
                write(member.value, indent: inner, to: &out)
                out += index == sorted.count - 1 ? "\n" : ",\n"
            }
            out += indent + "}"
        default:
            out += String(decoding: value.encoded(), as: UTF8.self)
        }
    }
}
