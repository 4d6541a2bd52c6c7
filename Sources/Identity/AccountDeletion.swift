import Contract
import Delivery
import LineProtocol
import Platform
import Storage

/// Deleting an account: one durable saga whose record identity keeps (`account_deletions`).
/// The request records it; accounts closes the accounts first (the one step that can refuse:
/// money left), and only then does identity erase the user, in the same transaction as it
/// records that closing; verification and reset erase their part next; the old address gets a
/// last mail. Every step is idempotent and driven by the record, so a stop of any service at
/// any point ends with the deletion complete once it is back, never half done or done twice.
extension IdentityService {
    /// Needs a recent step-up and the password (on the login budgets, as a password change).
    /// Answers the record as stored: a retry or a twin gets the deletion already under way.
    public func requestDeletion(token: String, password: String, caller: Caller) throws -> DeletionRecord {
        let session = try recentlySteppedUpSession(token: token)
        guard let user = try store.user(id: session.userID) else { throw IdentityError.unauthenticated }
        let now = clock.now()
        try checkCurrentPassword(password, of: user, session: session, caller: caller, now: now)
        let record = DeletionRecord(
            userID: user.userID, pseudonym: Self.newID("del_"), email: user.email, phone: user.phone, locale: user.locale, state: .closingAccounts,
            detail: nil, balances: nil, verificationDone: false, resetDone: false, requestedAt: now, finishedAt: nil)
        return try store.recordDeletion(record, event: event(user.userID, "account.deletion_requested", "ok", device: session.deviceID, caller, now))
    }

    /// The record once accounts has decided, or as it stands after `waitMilliseconds`.
    public func deletionOutcome(userID: String, waitMilliseconds: Int64) async throws -> DeletionRecord {
        let deadline = MonotonicClock.nowMilliseconds() + waitMilliseconds
        while true {
            guard let record = try store.deletion(userID: userID) else { throw IdentityError.unauthenticated }
            if record.state != .closingAccounts || MonotonicClock.nowMilliseconds() >= deadline { return record }
            try? await Task.sleep(for: .milliseconds(20))
        }
    }

    public func erasuresDue(service: String, limit: Int) throws -> [DeletionRecord] {
        try store.erasuresDue(service: service, limit: limit)
    }

    /// A follower's report. Accounts' `done` erases the user here (the step that makes login,
    /// reset and every token answer as for a user that never existed).
    public func erasureReported(service: String, userID: String, refusal: (detail: String, balances: JSON?)?) throws -> DeletionRecord {
        let record: DeletionRecord?
        switch (service, refusal) {
        case ("accounts", nil): record = try store.accountsClosed(userID: userID)
        case ("accounts", let refusal?): record = try store.accountsRefused(userID: userID, detail: refusal.detail, balances: refusal.balances)
        default: record = try store.followerErased(userID: userID, service: service, now: clock.now())
        }
        guard let record else { throw IdentityError.notFound("no deletion of this user") }
        if record.state == .mailing { sendLastMails() }
        return record
    }

    /// Sends the last mail of every deletion whose services are all done, then marks it
    /// deleted. A claim lasts a minute: a process stopped mid-way leaves the mail to the next
    /// sweep (`IdentityProcess` runs one every few seconds), so it goes at least once.
    public func sendLastMails() {
        let now = clock.now()
        guard let due = try? store.claimLastMails(now: now, leaseUntil: now + 60, limit: 32) else { return }
        for record in due {
            if let email = record.email { notices.accountDeleted(to: email, locale: record.locale, productName: settings.brand) }
            try? store.finishDeletion(userID: record.userID, now: clock.now())
        }
    }

    public func resumeDeletion(userID: String) throws -> DeletionRecord {
        guard let record = try store.resumeDeletion(userID: userID) else { throw IdentityError.notFound("no deletion of this user") }
        return record
    }
}

extension DeletionRecord {
    /// The operator's view: never the address or the number.
    var operatorJSON: JSON {
        [
            "user_id": .string(userID), "state": .string(state.rawValue), "requested_at": .int(requestedAt),
            "detail": detail.map(JSON.string) ?? .null, "balances": balances ?? .array([]),
            "waiting_for": .array(waitingFor.map(JSON.string)), "finished_at": finishedAt.map(JSON.int) ?? .null,
        ]
    }

    /// What a follower needs to erase its part.
    var erasureJSON: JSON {
        [
            "user_id": .string(userID), "pseudonym": .string(pseudonym), "email": email.map(JSON.string) ?? .null,
            "phone": phone.map(JSON.string) ?? .null,
        ]
    }
}
