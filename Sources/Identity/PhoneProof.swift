import Storage

/// Whether a user has proved the phone on their profile: a code sent to it came back through
/// verification (`identity.prove_phone`). Until then the number is no factor: verification sends
/// it nothing but the proof code. A proof names the number it proved, so a changed phone is
/// unproven again. Numbers stay shared-able (a household phone): each user proves it alone.
extension IdentityStore {
    /// The user's current phone when it is the one they proved; nil otherwise.
    public func provenPhone(userID: String) throws -> String? {
        try database.read { c in
            try c.queryOne(
                "SELECT u.phone AS phone FROM phone_proofs p JOIN users u ON u.user_id = p.user_id WHERE p.user_id = ? AND p.phone = u.phone",
                [.text(userID)]
            ).map { try $0.string("phone") }
        }
    }

    /// True when the user's current phone is the one they proved.
    public func isPhoneProven(userID: String) throws -> Bool { try provenPhone(userID: userID) != nil }

    /// Records that `phone` is proved for the user, if it is still the user's phone.
    /// Nil: no such user; false: the profile's phone is another number now.
    public func provePhone(userID: String, phone: String, now: Int64, event: PendingEvent) throws -> Bool? {
        try database.write { c in
            guard let row = try c.queryOne("SELECT phone FROM users WHERE user_id = ?", [.text(userID)]) else { return nil }
            guard try row.string("phone") == phone else { return false }
            let changed = try c.run("UPDATE phone_proofs SET phone = ?, proven_at = ? WHERE user_id = ?", [.text(phone), .integer(now), .text(userID)])
            if changed == 0 {
                _ = try c.run("INSERT INTO phone_proofs (user_id, phone, proven_at) VALUES (?, ?, ?)", [.text(userID), .text(phone), .integer(now)])
            }
            try Self.insert(event, c)
            return true
        }
    }
}

extension IdentityService {
    public func isPhoneProven(userID: String) throws -> Bool {
        try store.isPhoneProven(userID: userID)
    }

    /// The user's phone when its owner proved it (`identity.introspect` with `with_proven_phone`).
    public func provenPhone(userID: String) throws -> String? {
        try store.provenPhone(userID: userID)
    }

    /// Verification checked a `phone_proof` code sent to `phone` for this user.
    public func provePhone(userID: String, phone raw: String, caller: Caller) throws {
        let phone = try Normalization.phone(raw, defaultCountry: settings.defaultCountry)
        let now = clock.now()
        switch try store.provePhone(userID: userID, phone: phone, now: now, event: event(userID, "phone.proven", "ok", device: nil, caller, now)) {
        case nil: throw IdentityError.notFound("no such user")
        case false?: throw IdentityError.conflict(field: "phone", "the profile's phone is another number now")
        case true?: notify(.phoneProven, userID: userID, device: nil, at: now)
        }
    }
}
