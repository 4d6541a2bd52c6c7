import LineProtocol
import Secrets
import ServiceKit

/// `latchkey deposit USERNAME ACCOUNT AMOUNT_MINOR`: funds a user's account from outside
/// (`accounts.deposit`, booked against the ledger's `external` account), then records
/// `operator.deposit` (outcome: the account) in the user's audit trail. Idempotent: the same
/// `--idempotency-key` books once however often it runs; without one a new key is made and
/// printed, so a run whose answer was lost can be repeated safely.
enum DepositCommand {
    static func run(_ invocation: Invocation) throws -> Int32 {
        let (username, account, amountText) = (invocation.positional[0], invocation.positional[1], invocation.positional[2])
        guard let amount = Int64(amountText), amount > 0 else {
            throw ConfigurationError("AMOUNT_MINOR must be a positive integer in minor units (12500 for 125.00)")
        }
        let key = invocation.configuration.string(OperatorCommands.idempotencyKey) ?? "op_" + Base64URL.encode(SecureRandom.bytes(12))
        let connection = invocation.connection
        let userID = try connection.userID(of: username)
        let booked = try connection.result("accounts.deposit", [
            "user_id": .string(userID), "account": .string(account), "amount": .int(amount), "idempotency_key": .string(key),
        ])
        let answer: JSON = [
            "user_id": .string(userID), "username": .string(username), "account": .string(account), "amount": .int(amount),
            "balance": booked["balance"] ?? .null, "currency": booked["currency"] ?? .null, "idempotency_key": .string(key),
        ]
        do {
            _ = try connection.result("identity.record", ["user_id": .string(userID), "event": "operator.deposit", "outcome": .string(account)])
        } catch let error as OperatorErrorAnswer {
            throw AuditNotRecorded(key: key, cause: error)
        }
        return try invocation.emit(answer) {
            var table = TextTable(["USER", "ACCOUNT", "AMOUNT", "BALANCE", "CURRENCY"])
            table.add([username, account, String(amount), TextTable.cell(answer["balance"]), TextTable.cell(answer["currency"])])
            return table.text + "idempotency key \(key): run again with --idempotency-key \(key) and it books once\n"
        }
    }
}

/// The money is booked but its audit event is not: the operator repeats with the same key,
/// which books nothing more and records the event.
struct AuditNotRecorded: Error, CustomStringConvertible {
    let key: String
    let cause: OperatorErrorAnswer

    var description: String {
        "deposited, but the audit event was not recorded (\(cause)); run again with --idempotency-key \(key)"
    }
}
