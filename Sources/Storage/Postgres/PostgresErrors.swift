import CPostgres
import Platform

/// PostgreSQL errors as `StorageError`, by SQLSTATE. Messages are the server's own primary
/// text and constraint names, which never contain bound values (the DETAIL field, which can,
/// is left out).
enum PostgresErrors {
    // libpq's PG_DIAG_* field codes are character-literal macros, which Swift does not import.
    private static let sqlState = Int32(UInt8(ascii: "C"))
    private static let primaryMessage = Int32(UInt8(ascii: "M"))
    private static let constraintName = Int32(UInt8(ascii: "n"))
    private static let tableName = Int32(UInt8(ascii: "t"))

    static func error(from result: OpaquePointer, connectionOK: Bool, _ pq: LibPQ) -> StorageError {
        let state = field(result, sqlState, pq) ?? ""
        let message = field(result, primaryMessage, pq) ?? "unknown error"
        let constraint = field(result, constraintName, pq)
        let table = field(result, tableName, pq)
        switch state {
        case "23505": return .constraintUnique([table, constraint].compactMap { $0 }.joined(separator: "."))
        case _ where state.hasPrefix("23"): return .constraint(constraint ?? message)
        case "40001", "40P01": return .serializationFailure
        case "25006": return .readOnly
        case "53100": return .full
        case "57014": return .busy  // statement_timeout
        case _ where state.hasPrefix("08") || state.hasPrefix("53") || state.hasPrefix("57P"): return .unavailable(message)
        case _ where !connectionOK: return .unavailable(message)
        default: return .misuse("\(state): \(message)")
        }
    }

    static func connectionLost(_ message: String) -> StorageError {
        .unavailable(message.isEmpty ? "connection to the database lost" : message)
    }

    private static func field(_ result: OpaquePointer, _ code: Int32, _ pq: LibPQ) -> String? {
        pq.resultErrorField(result, code).map { String(cString: $0) }
    }
}

/// Connection strings in messages: the password never appears.
public enum PostgresURL {
    /// `postgres://user:secret@host/db` -> `postgres://user:***@host/db`; `password=secret` -> `password=***`.
    public static func redacted(_ url: String) -> String {
        var text = url
        if let scheme = text.firstRange(of: "://"), let at = text[scheme.upperBound...].firstIndex(of: "@") {
            let credentials = text[scheme.upperBound..<at]
            if let colon = credentials.firstIndex(of: ":") {
                text.replaceSubrange(text.index(after: colon)..<at, with: "***")
            }
        }
        for key in ["password=", "password%3D"] {
            var searchStart = text.startIndex
            while let range = text[searchStart...].firstRange(ofIgnoringCase: key) {
                let end = text[range.upperBound...].firstIndex { $0 == "&" || $0 == " " } ?? text.endIndex
                text.replaceSubrange(range.upperBound..<end, with: "***")
                searchStart = range.upperBound
            }
        }
        return text
    }
}
