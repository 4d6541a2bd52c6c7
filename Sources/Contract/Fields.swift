/// Members that many methods share, declared once with their limits.
public enum Fields {
    public static let session = Member("session", .string(maxBytes: 128))
    public static let sessionID = Member("session_id", .string(maxBytes: 128))
    public static let userID = Member("user_id", .string(maxBytes: 128))
    public static let deviceID = Member("device_id", .string(maxBytes: 128))
    public static let username = Member("username", .string(maxBytes: 256))
    public static let password = Member("password", .string(maxBytes: 1024))
    public static let email = Member("email", .string(maxBytes: 512))
    public static let phone = Member("phone", .string(maxBytes: 64))
    public static let keyID = Member("key_id", .string(maxBytes: 128))
    public static let requestID = Member("request_id", .string(maxBytes: 128))
    public static let limit = Member("limit", .integer(minimum: 1), .optional)
    /// A page cursor: opaque, sealed to the caller.
    public static let before = Member("before", .string(maxBytes: 128), .optional)

    public static let ok = Member("ok", .boolean)
    public static let aal = Member("aal", .integer(minimum: 0, maximum: 2))
    /// The cursor of the next (older) page; null on the last one.
    public static let next = Member("next", .nullable(.string))
    public static let factorNames = Schema.array(.string)
}
