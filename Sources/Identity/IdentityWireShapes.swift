import LineProtocol

// Records as the wire shows them, one shape for the user's own method and the operator's.

extension AuditEvent {
    /// An entry of `identity.activity` and `identity.operator_activity`.
    func json(_ seals: ActivitySeals) -> JSON {
        [
            "event_id": .string(seals.eventID(of: self)), "event": .string(self.event), "outcome": .string(self.outcome), "at": .int(self.at),
            "device_id": self.deviceID.map(JSON.string) ?? .null, "client": self.client.map(JSON.string) ?? .null,
        ]
    }
}

extension DeviceKeyRecord {
    /// An entry of `identity.keys` and `identity.operator_keys`: never the key material.
    var json: JSON {
        [
            "key_id": .string(keyID), "device_id": .string(deviceID), "protection": .string(protection.rawValue),
            "created_at": .int(createdAt), "last_used_at": lastUsedAt.map(JSON.int) ?? .null,
            "app_attest": attestation.map { ["app_id": .string($0.appID), "environment": .string($0.environment)] } ?? .null,
        ]
    }
}
