import Delivery
import FoundationEssentials
import Runtime
import Secrets

/// What `identity.login` and `identity.key_login` give back.
public struct LoginResult: Sendable, Equatable {
    public var session: String
    public var sessionID: String
    public var aal: Int
    public var requiredFactors: [String]
    public var sitekey: [UInt8]?
    /// `identity.login` only: this device's new device token (`lkd_...`), for its next login.
    public var deviceToken: String?
}

public struct Preferences: Sendable, Equatable {
    public var smsVerification: Bool
    public var sitekey: [UInt8]?
    /// Every second factor the user has (`sms`, `totp`, `device_key`), for the app to offer a choice.
    public var factors: [String] = []
    public var recoveryCodesLeft = 0
    public var email = ""
    /// The owner proved the address with a mailed link.
    public var emailVerified = false
    /// The language of the account's mails.
    public var locale = MailLocale.english
}

public struct IssuedChallenge: Sendable, Equatable {
    public var challenge: String
    public var expiresAt: Int64
}

/// Who is calling and from where: the device and client address go into audit events.
public struct Caller: Sendable, Equatable {
    public var client: String?
    public init(client: String?) { self.client = client }
}

/// The identity service's logic: typed inputs, typed results, `IdentityError`s. No sockets, no
/// JSON; time comes from `clock`. Blocking (SQLite, scrypt): call from worker threads.
public final class IdentityService: Sendable {
    public let store: IdentityStore
    public let settings: IdentitySettings
    public let clock: IdentityClock
    /// Per client address: in memory for one SQLite process, in the database on PostgreSQL,
    /// where every replica must spend from the same bucket.
    let clientBudget: any ClientBudget
    let challengeBudget: any ClientBudget
    /// A hash of a random password with the current parameters: unknown users are verified
    /// against it, so they cost the same scrypt work as known ones.
    let dummyHash: String
    /// Counts `identity.password_checks` (every login attempt does exactly one, known user or
    /// not): proves how much scrypt work a burst bought, without timing it.
    let metrics: Metrics
    static let passwordChecksCounter = "identity.password_checks"
    /// E-mails about account changes (a recovery code used), sent after the change commits.
    let notices: UserNotices
    /// Device keys as OpenSSL holds them, parsed once per key.
    let parsedKeys = ParsedKeyCache()
    /// A key no device holds: `key_login` checks signatures against it when there is no key, so
    /// an unknown user or a device without a key costs the same work as a wrong signature. Made
    /// on first use (a static), so a service at rest has done no elliptic-curve work.
    static let decoyKey = P256PrivateKey().publicKey
    let activitySeals: ActivitySeals

    public static let factors: Set<String> = ["sms", "voice", "email", "device_key", "passkey", "totp", "recovery_code"]

    public init(
        store: IdentityStore, settings: IdentitySettings, clock: IdentityClock = .system, metrics: Metrics = Metrics(), notices: UserNotices = .none
    ) throws {
        self.store = store
        self.notices = notices
        self.settings = settings
        self.clock = clock
        self.metrics = metrics
        activitySeals = ActivitySeals(serverKey: settings.serverKey)
        if store.sharedByReplicas {
            clientBudget = StoredClientBudget(store: store, name: "login", burst: settings.clientBurst, refillPerMinute: settings.clientRefillPerMinute)
            challengeBudget = StoredClientBudget(
                store: store, name: "challenge", burst: settings.challengeBurst, refillPerMinute: settings.challengeRefillPerMinute)
        } else {
            clientBudget = ClientLoginBudget(burst: settings.clientBurst, refillPerMinute: settings.clientRefillPerMinute)
            challengeBudget = ClientLoginBudget(burst: settings.challengeBurst, refillPerMinute: settings.challengeRefillPerMinute)
        }
        dummyHash = try PasswordHasher.unmatchableHash(parameters: settings.scrypt)
    }

    func verifyPassword(_ password: String, against phc: String) -> Bool {
        metrics.increment(Self.passwordChecksCounter)
        return PasswordHasher.verify(password, against: phc)
    }

    // MARK: Registration

    public struct Registration: Sendable {
        public var username: String
        public var password: String
        public var email: String
        public var phone: String
        public var locale: MailLocale

        public init(username: String, password: String, email: String, phone: String, locale: MailLocale = .english) {
            self.username = username
            self.password = password
            self.email = email
            self.phone = phone
            self.locale = locale
        }
    }

    /// Creates a user and returns its id, and mails a link that proves the address. A taken
    /// username is `conflict` (usernames are public); a taken e-mail address is not: the answer
    /// is the same as for a new one, with an id that names nobody, after the same work (the
    /// password hashed, one mail sent), and the address's owner is told by mail instead.
    public func register(_ input: Registration, caller: Caller) throws -> String {
        let username = try Normalization.username(input.username)
        let email = try Normalization.email(input.email)
        let phone = try Normalization.phone(input.phone, defaultCountry: settings.defaultCountry)
        try settings.policy.check(input.password, username: username, email: email)
        let passwordHash = try PasswordHasher.hash(PasswordPolicy.normalize(input.password), parameters: settings.scrypt)
        let now = clock.now()
        if try store.user(username: username) != nil { throw IdentityError.conflict(field: "username", "this username is taken") }
        let user = UserRecord(
            userID: Self.newID("usr_"), username: username, email: email, phone: phone, passwordHash: passwordHash,
            smsVerification: false, sitekey: nil, createdAt: now, locale: input.locale)
        let (link, verification) = emailToken(.verify, userID: user.userID, email: email, now: now)
        if let owner = try store.user(email: email) { return try registrationAttempted(owner: owner, caller: caller, now: now) }
        do {
            try store.insertUser(user, verification: verification, events: [
                event(user.userID, "user.registered", "ok", device: nil, caller, now),
                event(user.userID, "email.verification_sent", "registration", device: nil, caller, now),
            ])
        } catch IdentityError.conflict(field: "email", _) {
            // A twin registered the address between the look and the insert.
            guard let owner = try store.user(email: email) else { throw IdentityError.conflict(field: "email", "try again") }
            return try registrationAttempted(owner: owner, caller: caller, now: now)
        }
        try store.clearLoginThrottle(username: username)  // guesses at the name before it existed do not count
        notices.verifyAddress(to: email, locale: user.locale, token: link, links: settings.accountLinks, validForSeconds: settings.emailLinkSeconds, productName: settings.brand)
        return user.userID
    }

    /// The same answer as for a new address (an id that names nobody) after the same work; the
    /// address's owner is told, in the owner's language.
    private func registrationAttempted(owner: UserRecord, caller: Caller, now: Int64) throws -> String {
        try store.record([event(owner.userID, "registration.attempted", "email_taken", device: nil, caller, now)])
        notices.registrationAttempt(to: owner.email, locale: owner.locale, productName: settings.brand)
        return Self.newID("usr_")
    }

    // MARK: Password login

    /// Password login. The attempt is reserved against its budget before the password is
    /// checked (`LoginAttemptReservation`): a valid `deviceToken` for this user and device is
    /// judged on its own budget, any other client on its address's and the account's.
    public func login(
        username rawUsername: String, password rawPassword: String, deviceID rawDevice: String, deviceToken: String? = nil, caller: Caller
    ) throws -> LoginResult {
        let deviceID = try Normalization.deviceID(rawDevice)
        let password = PasswordPolicy.normalize(rawPassword)
        guard let username = try? Normalization.username(rawUsername) else {
            throw IdentityError.invalidCredentials("wrong username or password")
        }
        let now = clock.now()
        let user = try store.user(username: username)
        let reservation = try reserveLoginAttempt(username: username, user: user, deviceID: deviceID, deviceToken: deviceToken, caller: caller, now: now)
        // Exactly one scrypt verification either way: unknown users are checked against the dummy hash.
        guard verifyPassword(password, against: user?.passwordHash ?? dummyHash), let user else {
            try settleFailedLogin(reservation, username: username, user: user, deviceID: deviceID, caller: caller, now: now)
            throw IdentityError.invalidCredentials("wrong username or password")
        }
        var rehash: String?
        if PasswordHasher.needsRehash(user.passwordHash, current: settings.scrypt) {
            rehash = try PasswordHasher.hash(password, parameters: settings.scrypt)
        }
        let deviceToken = try settleSuccessfulLogin(reservation, username: username, user: user, deviceID: deviceID, now: now)
        // Only an attempt judged on the account's budget clears it: a device token's success
        // must not hand a guesser fresh free failures.
        var result = try openSession(
            user: user, deviceID: deviceID, aal: 1, clearThrottle: reservation.usesAccountBudget ? username : nil, rehash: rehash,
            deviceTokenHash: OpaqueToken.hash(deviceToken), how: "login.succeeded", caller: caller, now: now)
        result.deviceToken = deviceToken
        return result
    }

    /// `deviceTokenHash`: the device token this login gave the device, whose trust decides
    /// whether the device owes a factor for being new (nil: a login that gives none).
    func openSession(
        user: UserRecord, deviceID: String, aal: Int, clearThrottle: String?, rehash: String?, deviceTokenHash: [UInt8]? = nil, how: String,
        caller: Caller, now: Int64
    ) throws -> LoginResult {
        let token = OpaqueToken.make(prefix: "lks_")
        // `created_at` counts whole seconds: `identity.sessions` breaks its ties with the id,
        // which sorts by creation, so sessions made within one second still list newest first.
        let session = SessionRecord(
            sessionID: SortableIDs.shared.next(prefix: "ses_", randomBytes: 12), userID: user.userID, deviceID: deviceID, aal: aal, aal2At: aal >= 2 ? now : nil,
            createdAt: now, lastSeenAt: now, expiresAt: now + settings.sessionLifetimeSeconds, revokedAt: nil, deviceTokenHash: deviceTokenHash)
        var events = [
            event(user.userID, how, "ok", device: deviceID, caller, now),
            event(user.userID, "session.created", "aal\(aal)", device: deviceID, caller, now),
        ]
        if rehash != nil { events.append(event(user.userID, "password.rehashed", "ok", device: deviceID, caller, now)) }
        let required = try requiredFactors(of: session)
        try store.createSession(
            session, tokenHash: OpaqueToken.hash(token), clearThrottleFor: clearThrottle, rehash: rehash, events: events,
            auditKeepSince: now - settings.auditRetentionSeconds)
        return LoginResult(session: token, sessionID: session.sessionID, aal: aal, requiredFactors: required, sitekey: user.sitekey)
    }

    // MARK: Sessions

    /// The live session behind a token: unknown, revoked, expired and idle all answer
    /// `unauthenticated`. Refreshes `last_seen_at` (at most every few seconds).
    public func introspect(token: String) throws -> SessionRecord {
        guard OpaqueToken.isWellFormed(token, prefix: "lks_"), let session = try store.session(tokenHash: OpaqueToken.hash(token)) else {
            throw IdentityError.unauthenticated
        }
        let now = clock.now()
        guard session.revokedAt == nil, now < session.expiresAt, now - session.lastSeenAt < settings.sessionIdleSeconds else {
            throw IdentityError.unauthenticated
        }
        if now - session.lastSeenAt >= settings.lastSeenGranularitySeconds {
            try store.touchSession(id: session.sessionID, now: now)
        }
        return session
    }

    public func logout(token: String, caller: Caller) throws {
        let session = try introspect(token: token)
        let now = clock.now()
        _ = try store.revokeSession(
            id: session.sessionID, userID: session.userID, now: now,
            event: event(session.userID, "session.revoked", "logout", device: session.deviceID, caller, now))
    }

    /// The user's live sessions; a session that owes factors sees only its own entry.
    public func sessions(token: String) throws -> (current: SessionRecord, assurance: SessionAssurance, all: [SessionRecord]) {
        let current = try introspect(token: token)
        let assurance = try assurance(of: current)
        if assurance.owesFactors { return (current, assurance, [current]) }
        let now = clock.now()
        let live = try store.liveSessions(
            userID: current.userID, now: now, seenSince: now - settings.sessionIdleSeconds, limit: settings.maxSessionsListed)
        return (current, assurance, live)
    }

    /// Ends one of the user's sessions: a sensitive change (recent step-up).
    public func revoke(token: String, sessionID: String, caller: Caller) throws {
        try revokeOwn(token: token, caller: caller, audited: ("session.revoked", "revoked"), missing: "no such active session of yours") {
            userID, now, event in try store.revokeSession(id: sessionID, userID: userID, now: now, event: event)
        }
    }

    /// Revokes one of the session user's own things (a session, a device key): a sensitive change,
    /// so a recent step-up first. `revoke` decides and audits in one statement and says whether
    /// anything of the user's was live; nothing was is `not_found`.
    @discardableResult
    func revokeOwn(
        token: String, caller: Caller, audited: (event: String, outcome: String), missing: String,
        _ revoke: (_ userID: String, _ now: Int64, _ event: PendingEvent) throws -> Bool
    ) throws -> SessionRecord {
        let session = try recentlySteppedUpSession(token: token)
        let now = clock.now()
        let audit = event(session.userID, audited.event, audited.outcome, device: session.deviceID, caller, now)
        guard try revoke(session.userID, now, audit) else { throw IdentityError.notFound(missing) }
        return session
    }

    /// Reads, and optionally changes, the preferences. Turning SMS verification on needs only a
    /// session that owes no factor; turning it off or changing the sitekey needs a recent step-up
    /// (a password thief must not switch off the second factor or swap the anti-phishing image).
    public func preferences(token: String, smsVerification: Bool?, sitekey: [UInt8]??, locale: MailLocale? = nil, caller: Caller) throws -> Preferences {
        let session = try settledSession(token: token)
        guard var user = try store.user(id: session.userID) else { throw IdentityError.unauthenticated }
        let weakens = (smsVerification == false && user.smsVerification) || sitekey != nil
        if weakens { try requireRecentStepUp(session) }
        if let sitekey, let image = sitekey { try validateSitekey(image) }
        if smsVerification != nil || sitekey != nil || locale != nil {
            try store.setPreferences(userID: user.userID, smsVerification: smsVerification, sitekey: sitekey, locale: locale)
            let now = clock.now()
            try store.record([event(user.userID, "preferences.changed", "ok", device: session.deviceID, caller, now)])
            if let smsVerification { user.smsVerification = smsVerification }
            if let sitekey { user.sitekey = sitekey }
            if let locale { user.locale = locale }
        }
        let owned = try store.ownedFactors(userID: user.userID)
        return Preferences(
            smsVerification: user.smsVerification, sitekey: user.sitekey, factors: owned.factors, recoveryCodesLeft: owned.recoveryCodesLeft,
            email: user.email, emailVerified: user.emailVerifiedAt != nil, locale: user.locale)
    }

    /// A small PNG, JPEG, GIF or WebP image.
    func validateSitekey(_ image: [UInt8]) throws(IdentityError) {
        guard !image.isEmpty, image.count <= settings.sitekeyMaxBytes else {
            throw .invalidField("sitekey", "sitekey must be an image of at most \(settings.sitekeyMaxBytes) bytes")
        }
        let signatures: [[UInt8]] = [[0x89, 0x50, 0x4E, 0x47], [0xFF, 0xD8, 0xFF], Array("GIF8".utf8)]
        let isWebP = image.count >= 12 && Array(image[0..<4]) == Array("RIFF".utf8) && Array(image[8..<12]) == Array("WEBP".utf8)
        guard isWebP || signatures.contains(where: { image.starts(with: $0) }) else {
            throw .invalidField("sitekey", "sitekey must be a PNG, JPEG, GIF or WebP image")
        }
    }

    // MARK: Internal methods

    public func user(id: String) throws -> UserRecord {
        guard let user = try store.user(id: id) else { throw IdentityError.notFound("no such user") }
        return user
    }

    /// A verified second factor lifts the session to aal 2 and trusts its device for its user.
    /// A device trusted for the first time beside others is a new device: the owner is mailed.
    public func elevate(sessionID: String, factor: String, caller: Caller) throws -> Int {
        guard Self.factors.contains(factor) else {
            throw IdentityError.invalidField("factor", "factor must be sms, voice, email, device_key, passkey, totp or recovery_code")
        }
        let now = clock.now()
        let elevated = try store.elevate(sessionID: sessionID, now: now, seenSince: now - settings.sessionIdleSeconds) { session in
            // The service that checked the factor records `factor.passed` itself (see `record`).
            [event(session.userID, "session.elevated", factor, device: session.deviceID, caller, now)]
        }
        guard let elevated else { throw IdentityError.notFound("no such active session") }
        if elevated.newDevice, let user = try? store.user(id: elevated.session.userID) {
            notices.newDeviceSignIn(to: user.email, locale: user.locale, device: elevated.session.deviceID, from: caller.client, at: now, productName: settings.brand)
        }
        return 2
    }

    public func findByEmail(_ raw: String) throws -> String {
        guard let email = try? Normalization.email(raw), let user = try store.user(email: email) else {
            throw IdentityError.notFound("no user with this e-mail address")
        }
        return user.userID
    }

    /// The policy as `set_password` would apply it; an unknown user gets the rules without the
    /// username/e-mail ones.
    public func checkPassword(userID: String, password: String) throws {
        let user = try store.user(id: userID)
        try settings.policy.check(password, username: user?.username, email: user?.email)
    }

    public func setPassword(userID: String, password: String, caller: Caller) throws {
        let user = try user(id: userID)
        try settings.policy.check(password, username: user.username, email: user.email)
        let hash = try PasswordHasher.hash(PasswordPolicy.normalize(password), parameters: settings.scrypt)
        let now = clock.now()
        let changed = try store.setPasswordHash(
            userID: userID, username: user.username, hash: hash, event: event(userID, "password.changed", "ok", device: nil, caller, now))
        guard changed else { throw IdentityError.notFound("no such user") }
    }

    /// After a password reset: no device key, no device token and no recently set-up second
    /// factor survives (an intruder's enrolled key would otherwise keep logging in at aal 2, a
    /// planted authenticator app or recovery code would still pay the factor, and a token issued
    /// to the intruder would keep its own login budget through the owner's lock).
    public func cleanUpAfterReset(userID: String, caller: Caller) throws -> ResetCleanup {
        guard try store.user(id: userID) != nil else { throw IdentityError.notFound("no such user") }
        let now = clock.now()
        return try store.cleanUpAfterReset(userID: userID, now: now, recentSince: now - settings.resetRemovesFactorsSetUpWithinSeconds) { cleanup in
            [event(userID, "devices.revoked", "password_reset", device: nil, caller, now)]
                + cleanup.recentFactors.map { event(userID, "factor.removed", $0, device: nil, caller, now) }
        }
    }

    public func revokeAll(userID: String, caller: Caller) throws -> Int {
        let now = clock.now()
        return try store.revokeAllSessions(userID: userID, now: now, event: event(userID, "session.revoked", "all", device: nil, caller, now))
    }

    /// An event another service witnessed (a code passed or failed, a reset completed).
    public func record(userID: String, event name: String, outcome: String, deviceID: String?, caller: Caller) throws {
        let slug: (String, Int) -> Bool = { text, limit in
            (1...limit).contains(text.utf8.count)
                && text.utf8.allSatisfy { (0x61...0x7a).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2e || $0 == 0x5f }
        }
        guard slug(name, 64) else { throw IdentityError.invalidField("event", "event must be 1-64 of a-z, 0-9, '.', '_'") }
        guard slug(outcome, 64) else { throw IdentityError.invalidField("outcome", "outcome must be 1-64 of a-z, 0-9, '.', '_'") }
        let device = try deviceID.map { (value: String) throws(IdentityError) in try Normalization.deviceID(value) }
        guard try store.user(id: userID) != nil else { throw IdentityError.notFound("no such user") }
        try store.record([event(userID, name, outcome, device: device, caller, clock.now())])
    }

    // MARK: Activity

    /// `before` is the `next` of an earlier page of this user's.
    public func activity(token: String, limit: Int, before: String?) throws -> (events: [AuditEvent], next: String?) {
        let session = try settledSession(token: token)
        let position = try activitySeals.cursor.position(before, owner: session.userID)
        let bounded = max(1, min(limit, settings.maxActivityLimit))
        let events = try store.events(userID: session.userID, limit: bounded + 1, before: position)
        let page = Array(events.prefix(bounded))
        let last = events.count > bounded ? page.last : nil
        return (page, last.map { activitySeals.cursor.next(after: $0.eventID, owner: session.userID) })
    }

    // MARK: Helpers

    /// Tells the owner of a factor change, after it is committed (best effort, like every notice).
    func notify(_ change: FactorChange, userID: String, device: String?, at: Int64) {
        guard let user = try? store.user(id: userID) else { return }
        notices.factorChanged(to: user.email, locale: user.locale, change, device: device, at: at, productName: settings.brand)
    }

    func event(_ userID: String, _ name: String, _ outcome: String, device: String?, _ caller: Caller, _ at: Int64) -> PendingEvent {
        PendingEvent(userID: userID, event: name, outcome: outcome, deviceID: device, client: caller.client, at: at)
    }

    static func newID(_ prefix: String) -> String { prefix + Base64URL.encode(SecureRandom.bytes(16)) }
}
