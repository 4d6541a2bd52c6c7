import LineProtocol

/// Deleting an account: the user's request, the internal methods by which every other service
/// learns of it and reports its part done, and the operator's look at blocked deletions.
/// Identity keeps the one durable record of each deletion; accounts, verification and reset
/// follow it (each asks for the erasures due to it and applies them idempotently).
public enum AccountDeletionContract {
    /// The services that erase their part, in the order the record passes them: accounts first,
    /// because it alone can refuse (money left).
    public static let followers = ["accounts", "verification", "reset"]

    static let follower = Member("service", .string(values: followers))
    static let state = Member("state", .string(values: DeletionState.allCases.map(\.rawValue)))

    public static let deleteAccount = MethodContract(
        "identity.delete_account", .recentStepUp, group: .auth, retry: .neverSent,
        summary: "Deletes the account and what every service holds about the user; refused while money is left.",
        params: [Fields.session, Fields.password], result: [Fields.ok, state],
        errors: [.unauthenticated, .stepUpRequired, .invalidCredentials, .locked, .conflict])

    public static let erasuresDue = MethodContract(
        "identity.erasures_due", .internal, retry: .safe,
        summary: "The deletions whose erasure a service has still to do.",
        params: [follower, Fields.limit],
        result: [Member("erasures", .array(.object([
            Fields.userID, Member("pseudonym", .string), Member("email", .nullable(.string)), Member("phone", .nullable(.string)),
        ])))])
    public static let erasureDone = MethodContract(
        "identity.erasure_done", .internal, retry: .safe,
        summary: "A service reports its part of a deletion done, or refused (accounts: money left).",
        params: [
            follower, Fields.userID, Member("outcome", .string(values: ["done", "refused"])),
            Member("detail", .string(maxBytes: 64), .optional), Member("balances", .array(.anyObject), .optional),
        ],
        result: [Fields.ok, state], errors: [.notFound])

    static let deletion = Schema.object([
        Fields.userID, state, Member("requested_at", .timestamp), Member("detail", .nullable(.string)),
        Member("balances", .array(.anyObject)), Member("waiting_for", .array(.string)), Member("finished_at", .nullable(.timestamp)),
    ])
    public static let operatorDeletions = MethodContract(
        "identity.operator_deletions", .operator, retry: .safe, summary: "Deletions not finished yet, oldest first (`latchkey deletions`).",
        params: [Fields.limit], result: [Member("deletions", .array(deletion))])
    public static let operatorDeletion = MethodContract(
        "identity.operator_deletion", .operator, retry: .safe, summary: "One user's deletion (`latchkey deletions show`).",
        params: [Fields.userID], result: [Member("deletion", deletion)], errors: [.notFound])
    public static let operatorResumeDeletion = MethodContract(
        "identity.operator_resume_deletion", .operator, retry: .safe,
        summary: "Asks accounts again about a blocked deletion (after its money was paid out).",
        params: [Fields.userID], result: [Fields.ok, state], errors: [.notFound])

    static let all = [deleteAccount, erasuresDue, erasureDone, operatorDeletions, operatorDeletion, operatorResumeDeletion]
}

/// Where a deletion stands.
public enum DeletionState: String, Sendable, CaseIterable {
    /// Recorded; accounts has still to close the user's accounts. Nothing is erased yet.
    case closingAccounts = "closing_accounts"
    /// Accounts refused: money is left. The user can still sign in; the operator settles it.
    case blocked
    /// Identity erased the user; verification and reset erase their part.
    case erasing
    /// Everything is erased; the last mail is being sent to the old address.
    case mailing
    case deleted
}
