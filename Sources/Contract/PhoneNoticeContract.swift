import LineProtocol

/// The SMS that tells a phone number it is no longer the account's (after `identity.change_phone`).
/// Identity records each notice in the change's transaction but has no SMS provider; verification,
/// which has, asks for the notices due and reports each one sent (at least once).
public enum PhoneNoticeContract {
    static let noticeID = Member("notice_id", .integer(minimum: 1))

    public static let due = MethodContract(
        "identity.phone_notices_due", .internal, retry: .safe, summary: "SMS notices to old phone numbers still to send (verification).",
        params: [Fields.limit],
        result: [Member("notices", .array(.object([noticeID, Member("number", .string), Fields.locale])))])
    public static let sent = MethodContract(
        "identity.phone_notice_sent", .internal, retry: .safe, summary: "A notice went out: its number is forgotten.",
        params: [noticeID], result: [Fields.ok])

    static let all = [due, sent]
}
