/// A store's migrations are written once, in SQLite's DDL, and PostgreSQL's are derived from them:
/// the same tables, constraints and indexes, with PostgreSQL's types. Data statements in the
/// migrations are portable SQL already. What changes:
/// - `INTEGER PRIMARY KEY` (SQLite's rowid alias) becomes `BIGSERIAL PRIMARY KEY`;
/// - `INTEGER` becomes `BIGINT` (SQLite integers are 64-bit), `REAL` `DOUBLE PRECISION`,
///   `BLOB` `BYTEA`;
/// - SQLite's `WITHOUT ROWID` table option is dropped.
public enum PostgresDDL {
    public static func migrations(fromSQLite sqlite: [Migration]) -> [Migration] {
        sqlite.map { Migration(version: $0.version, name: $0.name, sql: translate($0.sql)) }
    }

    static func translate(_ sql: String) -> String {
        var text = sql
        for (sqliteForm, postgresForm) in [
            ("INTEGER PRIMARY KEY", "BIGSERIAL PRIMARY KEY"), ("INTEGER", "BIGINT"), ("REAL", "DOUBLE PRECISION"), ("BLOB", "BYTEA"),
            (" WITHOUT ROWID", ""),
        ] {
            text = replacingWords(sqliteForm, with: postgresForm, in: text)
        }
        return text
    }

    /// Replaces `word` where it stands as whole words (not inside `INTEGERS` or `my_blob`).
    private static func replacingWords(_ word: String, with replacement: String, in text: String) -> String {
        var result = ""
        var rest = Substring(text)
        while let range = rest.firstRange(of: word) {
            let before = rest[..<range.lowerBound]
            let after = rest[range.upperBound...]
            let boundedBefore = before.last.map { !isWordCharacter($0) } ?? true
            let boundedAfter = after.first.map { !isWordCharacter($0) } ?? true
            result += before
            result += boundedBefore && boundedAfter ? replacement : String(rest[range])
            rest = after
        }
        return result + rest
    }

    private static func isWordCharacter(_ character: Character) -> Bool { character.isLetter || character.isNumber || character == "_" }
}
