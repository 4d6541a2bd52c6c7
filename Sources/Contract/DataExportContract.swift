import LineProtocol

/// A user's copy of their data (GDPR Articles 15 and 20): one document of what every service
/// holds about the user. Identity answers its own part; the gateway, which reaches every service,
/// adds each other service's part (`*.export_user`) under that service's name, so the document
/// a client gets is whole or not given at all. `protocol/export.schema.json` is its JSON Schema.
public enum DataExportContract {
    /// The document's own version: a reader can tell the shape it reads.
    public static let formatVersion: Int64 = 1

    public static let export = MethodContract(
        "identity.export", .recentStepUp, retry: .safe,
        summary: "Everything every service holds about the user, as one JSON document (no secret, no token).",
        params: [Fields.session],
        result: [
            Member("format", .integer(minimum: 1)), Member("exported_at", .timestamp), Fields.userID,
            Member("profile", .anyObject), Member("factors", .anyObject), Member("sessions", .array(.anyObject)),
            Member("devices", .array(.anyObject)), Member("email_links", .array(.anyObject)), Member("activity", .array(.anyObject)),
            Member("accounts", .anyObject, .optional), Member("verification", .anyObject, .optional), Member("reset", .anyObject, .optional),
        ],
        errors: [.unauthenticated, .stepUpRequired])

    public static let accountsPart = MethodContract(
        "accounts.export_user", .internal, retry: .safe, summary: "The user's accounts, transfers and ledger entries (identity.export).",
        params: [Fields.userID],
        result: [Member("balances", .array(.anyObject)), Member("transfers", .array(.anyObject)), Member("entries", .array(.anyObject))])
    public static let verificationPart = MethodContract(
        "verification.export_user", .internal, retry: .safe, summary: "The user's verification requests and their events (identity.export).",
        params: [Fields.userID], result: [Member("requests", .array(.anyObject))])
    public static let resetPart = MethodContract(
        "reset.export_user", .internal, retry: .safe, summary: "The user's reset links, never their tokens (identity.export).",
        params: [Fields.userID], result: [Member("links", .array(.anyObject))])

    /// The parts the gateway adds to identity's, each under its service's name.
    public static let parts = [accountsPart, verificationPart, resetPart]

    static let all = [export] + parts
}
