/// Statements that cannot run inside a transaction (`CREATE DATABASE`, `DROP DATABASE`), for
/// tools that set up a database of their own (the bench); services never need it.
public enum PostgresAdmin {
    public static func execute(url: String, _ statement: String) throws(StorageError) {
        let connection = try PostgresConnection(url: url, applicationName: "latchkey-admin", connectTimeoutSeconds: 5)
        try connection.execute(statement)
    }

    /// `url` naming `database` instead of its own (`postgres://u:p@h:5432/x?q` -> `.../database?q`).
    public static func url(_ url: String, database: String) -> String {
        let parts = url.split(separator: "?", maxSplits: 1).map(String.init)
        guard let at = parts[0].lastIndex(of: "@"), let slash = parts[0][at...].firstIndex(of: "/") else { return url }
        return String(parts[0][..<slash]) + "/" + database + (parts.count > 1 ? "?" + parts[1] : "")
    }
}
