import FoundationEssentials

/// `latchkey options`: prints the table of configuration variables from the code itself,
/// so the operator's guide can be checked against it.
enum OptionsCommand {
    static func run() -> Int32 {
        print("| variable | flag | default | meaning |")
        print("|---|---|---|---|")
        for option in AllOptions.catalog {
            let defaultValue = option.defaultValue.map { "`\($0)`" } ?? ""
            print("| `\(option.environmentName)` | `\(option.flag)` | \(defaultValue) | \(option.help) |")
        }
        return 0
    }
}
