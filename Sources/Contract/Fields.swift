/// Members that many methods share, declared once with their limits.
public enum Fields {
    public static let session = Member("session", .string(maxBytes: 128))
    public static let sessionID = Member("session_id", .string(maxBytes: 128))
    public static let userID = Member("user_id", .string(maxBytes: 128))
    /// The app's own id for the device (identifierForVendor, say).
    public static let deviceID = Member("device_id", .string(maxBytes: 128, pattern: "^[A-Za-z0-9._:-]{1,128}$"))
    /// Any text at sign-in (a wrong one is only wrong credentials); `newUsername`'s rule at registration.
    public static let username = Member("username", .string(maxBytes: 256))
    /// 3-32 of a-z, 0-9, '.', '_' and '-' starting with a letter or digit, case-insensitive.
    public static let newUsername = Member("username", .string(maxBytes: 256, pattern: "^[A-Za-z0-9][A-Za-z0-9._-]{2,31}$"))
    public static let password = Member("password", .string(maxBytes: 1024))
    public static let email = Member("email", .string(maxBytes: EmailAddress.maxBytes, format: "email"))
    /// E.164 as the schema says it; the service also takes national forms for its default country.
    public static let phone = Member("phone", .string(maxBytes: 64, pattern: "^\\+(1[2-9][0-9]{2}[2-9][0-9]{6}|[2-9][0-9]{7,14})$"))
    public static let keyID = Member("key_id", .string(maxBytes: 128))
    public static let requestID = Member("request_id", .string(maxBytes: 128))
    public static let limit = Member("limit", .integer(minimum: 1), .optional)
    /// A page cursor: opaque, sealed to the caller (base64url of 16 bytes).
    public static let before = Member("before", .string(maxBytes: 22, pattern: "^[A-Za-z0-9_-]{21}[AQgw]$"), .optional)
    /// A device-key challenge as identity.challenge gives it: base64url of 32 bytes.
    public static let keyChallenge = Member("challenge", .string(maxBytes: 43, pattern: "^[A-Za-z0-9_-]{42}[AEIMQUYcgkosw048]$"))
    /// A DER ECDSA signature (9 to 80 bytes) in base64url.
    public static let keySignature = Member(
        "signature", .string(maxBytes: 108, pattern: "^(?:[A-Za-z0-9_-]{4}){3,26}(?:[A-Za-z0-9_-][AQgw]|[A-Za-z0-9_-]{2}[AEIMQUYcgkosw048])?$"))

    /// An App Attest assertion (`DCAppAttestService.generateAssertion`, CBOR, base64) over the
    /// bytes the device key signs in the same request.
    public static let appAttestAssertion = Member("app_attest_assertion", .string(maxBytes: 1024), .optional)

    /// The languages account mails are written in (Delivery's `MailLocale`, held to this list by a test).
    public static let mailLocales = ["en", "fr", "ru"]
    public static let locale = Member("locale", .string(values: mailLocales))

    public static let ok = Member("ok", .boolean)
    public static let aal = Member("aal", .integer(minimum: 0, maximum: 2))
    /// The cursor of the next (older) page; null on the last one.
    public static let next = Member("next", .nullable(.string))
    public static let factorNames = Schema.array(.string)
}
