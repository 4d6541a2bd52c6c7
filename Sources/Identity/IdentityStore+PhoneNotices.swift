import Delivery
import Storage

/// An SMS notice owed to a number the account left.
public struct PhoneNotice: Sendable, Equatable {
    public var noticeID: Int64
    public var number: String
    public var locale: MailLocale
}

extension IdentityStore {
    /// The oldest notices not reported sent.
    public func phoneNoticesDue(limit: Int) throws -> [PhoneNotice] {
        try database.read { c in
            try c.query("SELECT notice_id, number, locale FROM phone_notices ORDER BY notice_id LIMIT ?", [SQLValue(limit)]).map { row in
                PhoneNotice(noticeID: try row.int("notice_id"), number: try row.string("number"), locale: MailLocale(stored: try row.optionalString("locale")))
            }
        }
    }

    /// The notice went: the number is forgotten. Reporting it again changes nothing.
    public func phoneNoticeSent(noticeID: Int64) throws {
        try database.write { c in _ = try c.run("DELETE FROM phone_notices WHERE notice_id = ?", [.integer(noticeID)]) }
    }
}
