import Foundation
import Storage

/// `latchkey backup SOURCE.sqlite DEST.sqlite`: a consistent online copy of a service's
/// database while the service keeps running (SQLite's backup API, not a file copy).
enum BackupCommand {
    static func run(arguments: [String]) throws -> Int32 {
        guard arguments.count == 2 else {
            FileHandle.standardError.write(Data("usage: latchkey backup SOURCE.sqlite DEST.sqlite\n".utf8))
            return 2
        }
        try Database.backup(databaseAt: arguments[0], to: arguments[1])
        print("backed up \(arguments[0]) to \(arguments[1])")
        return 0
    }
}
