import Contract
import LineProtocol

extension IdentityService {
    /// The most activity events an export holds (newest first); the trail keeps
    /// `--audit-retention-days` anyway.
    static let exportActivityLimit = 10_000

    /// Identity's part of the user's copy of their data. Needs a recent step-up: the document
    /// names every device, address and number the account has used.
    public func exportData(token: String) throws -> JSON {
        let session = try recentlySteppedUpSession(token: token)
        guard var part = try store.exportPart(userID: session.userID, activityLimit: Self.exportActivityLimit) else {
            throw IdentityError.unauthenticated
        }
        part["format"] = .int(DataExportContract.formatVersion)
        part["exported_at"] = .int(clock.now())
        return .object(part)
    }
}
