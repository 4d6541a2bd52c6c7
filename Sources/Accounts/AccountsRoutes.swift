import Contract
import LineProtocol
import Platform
import RPC
import ServiceKit

/// The wire side of the methods: params in, JSON out. Sessions resolve through identity on every call.
public enum AccountsRoutes {
    public static func register(on router: Router, service: AccountsService, sessions: SessionResolver) {
        router.register(AccountsContract.balances) { params, context in
            let session = try await sessions.resolve(params, context)
            return ["accounts": .array(try service.balances(userID: session.userID).map(\.json))]
        }
        router.register(AccountsContract.transfer) { params, context in
            // Read once, judged after the session: a code goes to the proven phone, read with the
            // session, which saves verification a call to identity.
            let confirmWith = Result { () throws(RPCError) in try params.optionalString("confirm_with", maxLength: 16) ?? "sms" }
            let session = try await sessions.resolve(params, context, withProvenPhone: (try? confirmWith.get()) == "sms")
            let request = TransferRequest(
                from: try accountName(params, "from"), to: try accountName(params, "to"),
                amountMinor: try params.int("amount"),
                idempotencyKey: try idempotencyKey(params, maxBytes: service.settings.maxIdempotencyKeyBytes))
            switch try confirmWith.get() {
            case "sms":
                if let until = session.phoneCoolingOffUntil, until > WallClock.nowSeconds() {
                    throw RPCError(
                        .conflict, "the phone number changed recently: confirm transfers with the device key until then",
                        extra: ["detail": "phone_recently_changed", "retry_after": .int(until - WallClock.nowSeconds()), "until": .int(until)])
                }
                return try await service.transfer(userID: session.userID, request, provenPhone: session.provenPhone, context: context).json
            case "device_key":
                return try service.transferWithDeviceKey(
                    userID: session.userID, sessionDeviceID: session.deviceID, deviceID: try params.string("device_id", maxLength: 128), request
                ).json
            default:
                throw RPCError.invalidParams("confirm_with must be sms or device_key", field: "confirm_with")
            }
        }
        // `code` for an SMS-confirmed transfer, `device_id` + `signature` for a device-key one.
        router.register(AccountsContract.confirm) { params, context in
            let session = try await sessions.resolve(params, context)
            let transferID = try params.string("transfer_id", maxLength: 64)
            let balances: [AccountBalance]
            if params.has("signature") {
                guard !params.has("code") else { throw RPCError.invalidParams("give code or signature, not both", field: "code") }
                balances = try await service.confirmWithDeviceKey(
                    userID: session.userID, sessionDeviceID: session.deviceID, transferID: transferID,
                    deviceID: try params.string("device_id", maxLength: 128), signature: try params.string("signature", maxLength: 256),
                    appAttestAssertion: try params.optionalString("app_attest_assertion", maxLength: 1024), context: context)
            } else {
                let code = try params.string("code", maxLength: 32)
                balances = try await service.confirm(userID: session.userID, transferID: transferID, code: code, context: context)
            }
            return ["status": "done", "transfer_id": .string(transferID), "accounts": .array(balances.map(\.json))]
        }
        router.register(AccountsContract.history) { params, context in
            let session = try await sessions.resolve(params, context)
            let limit = try params.optionalInt("limit", range: 1...Int64(service.settings.historyMaxLimit)).map { Int($0) }
            let page = try service.history(userID: session.userID, limit: limit, before: try params.optionalString("before", maxLength: 32))
            return ["entries": .array(page.entries.map(\.json)), "next": page.next.map(JSON.string) ?? .null]
        }
        router.register(AccountsContract.deposit) { params, _ in
            let userID = try params.string("user_id", maxLength: 128)
            guard !userID.isEmpty else { throw RPCError.invalidParams("user_id must not be empty", field: "user_id") }
            let balance = try service.deposit(
                userID: userID, account: try accountName(params, "account"), amountMinor: try params.int("amount"),
                idempotencyKey: try idempotencyKey(params, maxBytes: service.settings.maxIdempotencyKeyBytes))
            return ["balance": .int(balance), "currency": .string(service.settings.currency)]
        }
        router.register(AccountsContract.payOut) { params, _ in
            let balance = try service.payOut(
                userID: try params.string("user_id", maxLength: 128), account: try accountName(params, "account"),
                amountMinor: try params.int("amount"), idempotencyKey: try idempotencyKey(params, maxBytes: service.settings.maxIdempotencyKeyBytes))
            return ["balance": .int(balance), "currency": .string(service.settings.currency)]
        }
        router.register(DataExportContract.accountsPart) { params, _ in
            try service.exportPart(userID: try params.string("user_id", maxLength: 128))
        }
        router.register(AccountsContract.audit) { _, _ in
            let breaches = try service.audit()
            return ["ok": .bool(breaches.isEmpty), "breaches": .array(breaches.map(\.json))]
        }
    }

    static func accountName(_ params: Params, _ key: String) throws(RPCError) -> AccountName {
        guard let name = AccountName(rawValue: try params.string(key, maxLength: 16)) else {
            throw RPCError.invalidParams("\(key) must be checking or saving", field: key)
        }
        return name
    }

    static func idempotencyKey(_ params: Params, maxBytes: Int) throws(RPCError) -> String {
        let key = try params.string("idempotency_key", maxLength: maxBytes)
        guard !key.isEmpty else { throw RPCError.invalidParams("idempotency_key must not be empty", field: "idempotency_key") }
        return key
    }
}
