import LineProtocol
import ServiceKit

/// `latchkey deletions [USER_ID]` and `latchkey settle-deletion USER_ID`: the account deletions
/// not finished yet, and the way on for one that money blocks. Settling pays every balance
/// left out to `external` (`accounts.pay_out`, once per account however often it runs: the
/// key names the user and the account), which the operator has paid to the user by other
/// means, then asks accounts again (`identity.operator_resume_deletion`).
enum DeletionCommands {
    static func list(_ invocation: Invocation) throws -> Int32 {
        let connection = invocation.connection
        let deletions: [JSON]
        if let userID = invocation.positional.first {
            deletions = [try connection.result("identity.operator_deletion", ["user_id": .string(userID)])["deletion"] ?? .null]
        } else {
            deletions = try connection.result("identity.operator_deletions", [:])["deletions"]?.arrayValue ?? []
        }
        return try invocation.emit(["deletions": .array(deletions)]) { table(deletions) }
    }

    static func settle(_ invocation: Invocation) throws -> Int32 {
        let userID = invocation.positional[0]
        let connection = invocation.connection
        let deletion = try connection.result("identity.operator_deletion", ["user_id": .string(userID)])["deletion"] ?? .null
        guard deletion["state"]?.stringValue == "blocked" else {
            throw NothingToSettle(state: deletion["state"]?.stringValue ?? "unknown")
        }
        var paid: [JSON] = []
        for balance in deletion["balances"]?.arrayValue ?? [] {
            guard let account = balance["name"]?.stringValue, let amount = balance["balance"]?.intValue, amount > 0 else { continue }
            let answer = try connection.result("accounts.pay_out", [
                "user_id": .string(userID), "account": .string(account), "amount": .int(amount),
                "idempotency_key": .string("settle-deletion \(userID) \(account)"),
            ])
            paid.append(["account": .string(account), "amount": .int(amount), "balance": answer["balance"] ?? .null])
            _ = try connection.result("identity.record", ["user_id": .string(userID), "event": "operator.pay_out", "outcome": .string(account)])
        }
        let resumed = try connection.result("identity.operator_resume_deletion", ["user_id": .string(userID)])
        let answer: JSON = ["user_id": .string(userID), "paid_out": .array(paid), "state": resumed["state"] ?? .null]
        return try invocation.emit(answer) {
            var table = TextTable(["ACCOUNT", "PAID OUT", "BALANCE"])
            for row in paid { table.add([TextTable.cell(row["account"]), TextTable.cell(row["amount"]), TextTable.cell(row["balance"])]) }
            return table.text + "deletion of \(userID): \(TextTable.cell(answer["state"])); accounts is asked again\n"
        }
    }

    private static func table(_ deletions: [JSON]) -> String {
        var table = TextTable(["USER_ID", "STATE", "REQUESTED_AT", "DETAIL", "WAITING_FOR"])
        for deletion in deletions {
            let waiting = deletion["waiting_for"]?.arrayValue?.compactMap(\.stringValue).joined(separator: ",") ?? ""
            table.add([
                TextTable.cell(deletion["user_id"]), TextTable.cell(deletion["state"]), TextTable.cell(deletion["requested_at"]),
                TextTable.cell(deletion["detail"]), waiting.isEmpty ? "-" : waiting,
            ])
        }
        return table.text
    }
}

/// `settle-deletion` of a deletion that money does not block (exit 1, like an error answer).
struct NothingToSettle: Error, CustomStringConvertible {
    let state: String
    var description: String { "this deletion is \(state), not blocked: nothing to settle" }
}
