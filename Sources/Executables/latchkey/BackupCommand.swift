import FoundationEssentials
import ServiceKit
import Storage

/// `latchkey backup SOURCE.sqlite DEST.sqlite`: a consistent online copy of a service's
/// database while the service keeps running (SQLite's backup API, not a file copy).
enum BackupCommand {
    static func run(arguments: [String]) throws -> Int32 {
        guard arguments.count == 2 else { throw ConfigurationError("usage: latchkey backup SOURCE.sqlite DEST.sqlite") }
        let progress = TerminalProgress()
        try Database.backup(databaseAt: arguments[0], to: arguments[1], pagesPerStep: 1024) { copied, total in
            progress.show("backing up: \(copied) of \(total) pages")
        }
        progress.clear()
        print("backed up \(arguments[0]) to \(arguments[1])")
        return 0
    }
}
