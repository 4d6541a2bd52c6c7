import Secrets

/// Names an e-mail address in the rate-limit records by HMAC-SHA256 under the reset service's
/// own key (`--reset-key`, else `<data dir>/reset.key`): a list of addresses hashed with plain
/// SHA-256 cannot find who asked for a reset, and the records never hold the address itself.
public struct ResetSubject: Sendable {
    private let key: HMACKey

    public init(key: [UInt8]) {
        precondition(key.count >= 32, "the reset key must be at least 32 bytes")
        self.key = HMACKey(key)
    }

    /// `e:` + hex HMAC of the normalised address (the `e:` prefix is new: migration 2 dropped
    /// the unkeyed `a:` records of the first version).
    public func address(_ normalizedAddress: String) -> String {
        "e:" + Hex.encode(key.authenticate(Array(normalizedAddress.utf8)))
    }
}
