import Contract
import FoundationEssentials
import LineProtocol
import RPC
import Secrets

/// What accounts needs from identity to accept a device-key confirmation (internal
/// `identity.verify_signature`): accounts never sees a key, and trusts no client claim.
public protocol DeviceKeyPort: Sendable {
    /// Succeeds when the active `biometry` key of this user's device signed `message`; throws
    /// identity's refusal (`invalid_credentials` for a signature that does not verify).
    /// `appAttestAssertion`: the app's App Attest assertion over `message`, passed on unread.
    func verifySignature(
        userID: String, deviceID: String, message: [UInt8], signature: String, appAttestAssertion: String?, context: CallContext?
    ) async throws(RPCError)
}

public struct RPCDeviceKeys: DeviceKeyPort {
    let client: RPCClient

    public init(client: RPCClient) { self.client = client }

    public func verifySignature(
        userID: String, deviceID: String, message: [UInt8], signature: String, appAttestAssertion: String?, context: CallContext?
    ) async throws(RPCError) {
        var params: [String: JSON] = [
            "user_id": .string(userID), "device_id": .string(deviceID), "message": .string(Base64URL.encode(message)),
            "signature": .string(signature),
        ]
        if let appAttestAssertion { params["app_attest_assertion"] = .string(appAttestAssertion) }
        let answer = try await client.call(IdentityInternalContract.verifySignature, params: params, context: context)
        guard answer["ok"] == true else { throw RPCError(.unavailable, "identity gave an unexpected answer") }
    }
}

/// A device-key transfer as answered: the ticket, plus the challenge and the bytes to sign.
public struct KeyTransferTicket: Sendable, Equatable {
    public let ticket: TransferTicket
    public let challenge: KeyChallenge
    public let sign: [UInt8]

    public var json: JSON {
        guard case .object(var members) = ticket.json else { return ticket.json }
        members["confirm_with"] = "device_key"
        members["device_id"] = .string(challenge.deviceID)
        members["challenge"] = .string(Base64URL.encode(challenge.challenge))
        members["sign"] = .string(Base64URL.encode(sign))
        return .object(members)
    }
}

/// Transfers confirmed by the session's device key instead of an SMS code: no
/// verification call, no code; the app signs the transfer's own bytes behind Face ID.
extension AccountsService {
    /// Records the pending transfer with a fresh challenge bound to it and to `deviceID` (the
    /// session's own device). Idempotent by key, like `transfer`: a retry answers the same challenge.
    public func transferWithDeviceKey(
        userID: String, sessionDeviceID: String, deviceID: String, _ request: TransferRequest
    ) throws -> KeyTransferTicket {
        guard deviceKeys != nil else { throw AccountsError.invalidParams(field: "confirm_with", message: "confirm_with device_key is not enabled") }
        guard deviceID == sessionDeviceID else {
            throw AccountsError.invalidParams(field: "device_id", message: "device_id must be the device of this session")
        }
        try validate(request)
        let outcome = try store.recordKeyConfirmedTransfer(
            newTransfer(userID: userID, request), deviceID: deviceID, challenge: SecureRandom.bytes(TransferSigning.challengeByteCount),
            attempts: settings.keyConfirmAttempts)
        switch outcome {
        case .recorded(let transfer, let challenge, let new):
            if new { metrics?.increment("transfers.created") }
            return KeyTransferTicket(
                ticket: TransferTicket(transfer: transfer), challenge: challenge,
                sign: TransferSigning.bytes(transfer, challenge: challenge.challenge, service: settings.brand))
        case .insufficientFunds: throw AccountsError.insufficientFunds
        case .conflict(let message): throw AccountsError.conflict(message)
        }
    }

    /// Books the transfer when identity confirms that the session's device key signed its
    /// bytes. Only a signature that does not verify spends one of the transfer's attempts: one
    /// over anything else (another amount, account, transfer or challenge) fails like a wrong
    /// code. Every valid signature of a booked transfer answers its result, also those checked
    /// at once with the one that booked it; once the attempts are spent nothing books it.
    public func confirmWithDeviceKey(
        userID: String, sessionDeviceID: String, transferID: String, deviceID: String, signature: String, appAttestAssertion: String? = nil,
        context: CallContext?
    ) async throws -> [AccountBalance] {
        guard let deviceKeys else { throw AccountsError.invalidParams(field: "signature", message: "confirming with a device key is not enabled") }
        guard deviceID == sessionDeviceID else {
            throw AccountsError.invalidParams(field: "device_id", message: "device_id must be the device of this session")
        }
        guard let transfer = try store.transfer(id: transferID, userID: userID) else { throw AccountsError.notFound }
        guard let challenge = try store.keyChallenge(transferID: transferID) else {
            throw AccountsError.conflict("this transfer is confirmed with its SMS code")
        }
        if let balances = try settledOrExpired(transfer, userID: userID) { return balances }
        guard challenge.deviceID == deviceID else {
            throw AccountsError.invalidParams(field: "device_id", message: "this transfer waits for another device's signature")
        }
        guard challenge.attemptsLeft > 0 else { throw AccountsError.tooManyAttempts }
        let message = TransferSigning.bytes(transfer, challenge: challenge.challenge, service: settings.brand)
        do throws(RPCError) {
            try await deviceKeys.verifySignature(
                userID: userID, deviceID: deviceID, message: message, signature: signature, appAttestAssertion: appAttestAssertion, context: context)
        } catch {
            metrics?.increment("confirms.key_refused")
            guard error.reason == .invalidCredentials else { throw error }
            guard let attemptsLeft = try store.spendKeyAttempt(transferID: transferID) else { throw AccountsError.tooManyAttempts }
            throw AccountsError.invalidSignature(attemptsLeft: attemptsLeft)
        }
        return try finish(transferID: transferID, userID: userID, whileKeyAttemptsLeft: true)
    }
}
