import Secrets
import Storage

extension IdentityStore {
    /// Replaces the user's whole set with `hashes`, in one transaction.
    func replaceRecoveryCodes(userID: String, hashes: [[UInt8]], now: Int64, event: PendingEvent) throws {
        try database.write { c in
            _ = try c.run("DELETE FROM recovery_codes WHERE user_id = ?", [.text(userID)])
            for hash in hashes {
                _ = try c.run("INSERT INTO recovery_codes (user_id, code_hash, created_at) VALUES (?, ?, ?)", [.text(userID), .blob(hash), .integer(now)])
            }
            try Self.insert(event, c)
        }
    }

    /// Uses up the unused code whose hash is `hash`: nil when there is none. Every unused hash
    /// of the user is compared in constant time, without stopping at a match. Returns how many
    /// unused codes remain after this one.
    static func useRecoveryCode(_ c: Connection, userID: String, hash: [UInt8], now: Int64) throws -> Int? {
        let unused = try c.query("SELECT code_hash FROM recovery_codes WHERE user_id = ? AND used_at IS NULL", [.text(userID)])
            .map { try $0.blob("code_hash") }
        var matched: [UInt8]?
        for stored in unused where constantTimeEquals(stored, hash) { matched = stored }
        guard let matched else { return nil }
        let changed = try c.run(
            "UPDATE recovery_codes SET used_at = ? WHERE user_id = ? AND code_hash = ? AND used_at IS NULL",
            [.integer(now), .text(userID), .blob(matched)])
        return changed == 1 ? unused.count - 1 : nil
    }

    /// Unused codes the user has left.
    func recoveryCodesLeft(userID: String) throws -> Int {
        try database.read { c in
            Int(try c.queryOne("SELECT COUNT(*) AS n FROM recovery_codes WHERE user_id = ? AND used_at IS NULL", [.text(userID)])?.int("n") ?? 0)
        }
    }
}
