import LineProtocol
import ServiceKit

/// The operator commands on identity: each names a user by username, finds the id
/// (`identity.find_by_username`), then calls one `identity.operator_*` method. The changes
/// (unlock, revoke-session, revoke-key) are recorded by identity as `operator.*` events.
enum UserCommands {
    static func unlock(_ invocation: Invocation) throws -> Int32 {
        let username = invocation.positional[0]
        let connection = invocation.connection
        let cleared = try connection.result("identity.operator_unlock", ["user_id": .string(try connection.userID(of: username))])
        return try invocation.emit(cleared) {
            let lock = cleared["was_locked"] == true ? "the lock lifted, " : ""
            return "unlocked \(username): \(lock)\(TextTable.cell(cleared["failures_cleared"])) consecutive failed logins forgiven\n"
        }
    }

    static func sessions(_ invocation: Invocation) throws -> Int32 {
        let username = invocation.positional[0]
        let connection = invocation.connection
        let answer = try connection.result("identity.operator_sessions", ["user_id": .string(try connection.userID(of: username))])
        return try invocation.emit(answer) {
            let sessions = answer["sessions"]?.arrayValue ?? []
            guard !sessions.isEmpty else { return "\(username) has no live session\n" }
            var table = TextTable(["SESSION_ID", "DEVICE", "AAL", "CREATED", "LAST_SEEN", "EXPIRES"])
            for session in sessions {
                table.add([
                    TextTable.cell(session["session_id"]), TextTable.cell(session["device_id"]), TextTable.cell(session["aal"]),
                    TextTable.time(session["created_at"]), TextTable.time(session["last_seen_at"]), TextTable.time(session["expires_at"]),
                ])
            }
            return table.text
        }
    }

    static func revokeSession(_ invocation: Invocation) throws -> Int32 {
        let username = invocation.positional[0]
        let everySession = try invocation.configuration.bool(OperatorCommands.all)
        guard (invocation.positional.count == 2) != everySession else {
            throw ConfigurationError("usage: latchkey revoke-session USERNAME (SESSION_ID | --all): one of the two")
        }
        let connection = invocation.connection
        var params: [String: JSON] = ["user_id": .string(try connection.userID(of: username))]
        if everySession { params["all"] = true } else { params["session_id"] = .string(invocation.positional[1]) }
        let answer = try connection.result("identity.operator_revoke_session", .object(params))
        return try invocation.emit(answer) {
            let count = answer["revoked"]?.intValue ?? 0
            return "revoked \(count) session\(count == 1 ? "" : "s") of \(username)\n"
        }
    }

    static func keys(_ invocation: Invocation) throws -> Int32 {
        let username = invocation.positional[0]
        let connection = invocation.connection
        let answer = try connection.result("identity.operator_keys", ["user_id": .string(try connection.userID(of: username))])
        return try invocation.emit(answer) {
            let keys = answer["keys"]?.arrayValue ?? []
            guard !keys.isEmpty else { return "\(username) has no active device key\n" }
            var table = TextTable(["KEY_ID", "DEVICE", "PROTECTION", "CREATED", "LAST_USED"])
            for key in keys {
                table.add([
                    TextTable.cell(key["key_id"]), TextTable.cell(key["device_id"]), TextTable.cell(key["protection"]),
                    TextTable.time(key["created_at"]), TextTable.time(key["last_used_at"]),
                ])
            }
            return table.text
        }
    }

    static func revokeKey(_ invocation: Invocation) throws -> Int32 {
        let (username, keyID) = (invocation.positional[0], invocation.positional[1])
        let connection = invocation.connection
        let answer = try connection.result(
            "identity.operator_revoke_key", ["user_id": .string(try connection.userID(of: username)), "key_id": .string(keyID)])
        return try invocation.emit(answer) { "revoked key \(keyID) of \(username)\n" }
    }

    static func activity(_ invocation: Invocation) throws -> Int32 {
        let username = invocation.positional[0]
        let limit = try invocation.configuration.int(OperatorCommands.limit, range: 1...100)
        let connection = invocation.connection
        let answer = try connection.result(
            "identity.operator_activity", ["user_id": .string(try connection.userID(of: username)), "limit": .int(Int64(limit))])
        return try invocation.emit(answer) {
            let events = answer["events"]?.arrayValue ?? []
            guard !events.isEmpty else { return "no activity for \(username)\n" }
            var table = TextTable(["EVENT_ID", "AT", "EVENT", "OUTCOME", "DEVICE", "CLIENT"])
            for event in events {
                table.add([
                    TextTable.cell(event["event_id"]), TextTable.time(event["at"]), TextTable.cell(event["event"]),
                    TextTable.cell(event["outcome"]), TextTable.cell(event["device_id"]), TextTable.cell(event["client"]),
                ])
            }
            return table.text
        }
    }
}
