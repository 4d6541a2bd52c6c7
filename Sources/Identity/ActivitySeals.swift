import RPC
import Secrets

/// How the audit trail names its rows to their user: an event's `event_id` and a page's cursor
/// seal the row's sequence number to the user under identity's key, so neither tells how many
/// events other users had in between, and only a cursor issued to this user pages.
struct ActivitySeals: Sendable {
    let cursor: PageCursor
    private let eventIDs: SequenceSealer

    init(serverKey: [UInt8]) {
        cursor = PageCursor(key: serverKey, method: "identity.activity")
        eventIDs = SequenceSealer(key: serverKey, purpose: "identity event id")
    }

    func eventID(of event: AuditEvent) -> String { eventIDs.seal(event.eventID, owner: event.userID) }
}
