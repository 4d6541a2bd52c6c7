import FoundationEssentials
import Secrets
import ServiceKit
import WebAuthn

/// Wall-clock time in unix seconds, injectable so tests can move it.
public struct IdentityClock: Sendable {
    public let now: @Sendable () -> Int64

    public init(now: @escaping @Sendable () -> Int64) { self.now = now }

    public static let system = IdentityClock { Int64(Date().timeIntervalSince1970) }
}

/// Everything configurable about the identity service, with defaults. Built from flags and
/// `LATCHKEY_*` variables by `IdentityOptions.settings(from:)`.
public struct IdentitySettings: Sendable {
    public var scrypt = ScryptParameters(logN: 15, r: 8, p: 1)
    public var policy = PasswordPolicy()
    public var defaultCountry = PhoneCountry.unitedStates
    public var sessionLifetimeSeconds: Int64 = 12 * 3600
    public var sessionIdleSeconds: Int64 = 30 * 60
    /// `last_seen_at` is written at most this often per session (introspection is frequent).
    public var lastSeenGranularitySeconds: Int64 = 15
    /// The budget of clients without a device token, per username.
    public var accountThrottle = AccountThrottlePolicy()
    /// The budget of each device token (OWASP device cookies), and how long and how many.
    public var deviceTokenThrottle = AccountThrottlePolicy.deviceTokenDefault
    public var deviceTokenLifetimeSeconds: Int64 = 90 * 86_400
    public var maxDeviceTokensPerUser = 10
    public var clientBurst = 20
    public var clientRefillPerMinute = 10
    public var challengeLifetimeSeconds: Int64 = 120
    public var maxKeysPerUser = 5
    public var sitekeyMaxBytes = 16 * 1024
    public var maxSessionsListed = 100
    public var maxActivityLimit = 100
    /// Audit events are kept this long (dropped at the user's next login).
    public var auditRetentionSeconds: Int64 = 400 * 86_400
    /// Challenges asked for by username (no session) per client address: burst and refill.
    public var challengeBurst = 30
    public var challengeRefillPerMinute = 30
    /// Sensitive changes need aal 2 reached at most this long ago.
    public var stepUpWindowSeconds: Int64 = 600
    /// Identity's own key (`--identity-key`, else `<data dir>/identity.key`): seals TOTP secrets
    /// and keys recovery-code hashes. Random per process unless configured (tests).
    public var serverKey: [UInt8] = SecureRandom.bytes(32)
    /// The issuer authenticator apps show (`--brand`).
    public var brand = "Latchkey"
    /// Wrong authenticator and recovery codes, one budget per user: 3 free, then 30 s doubling
    /// to 900 s, at most 100 in a row (NIST SP 800-63B 5.2.2).
    public var secondFactorThrottle = AccountThrottlePolicy(freeFailures: 3, maximumConsecutiveFailures: 100)
    /// Authenticator codes of this many steps (30 s) before or after now are accepted.
    public var totpSkewSteps: Int64 = 1
    /// A password reset removes the authenticator app and recovery codes set up this recently.
    public var resetRemovesFactorsSetUpWithinSeconds: Int64 = 7 * 86_400
    /// Where mailed account links point.
    public var accountLinks = AccountLinks()
    /// How long a verification or e-mail change link works.
    public var emailLinkSeconds: Int64 = 86_400
    /// How long the old address can undo an e-mail change.
    public var emailRevertSeconds: Int64 = 7 * 86_400
    /// After a phone change, SMS codes confirm no money for this long.
    public var phoneChangeCoolingOffSeconds: Int64 = 72 * 3600
    /// At most one verification mail per user this often.
    public var emailResendIntervalSeconds: Int64 = 60
    /// How long `identity.delete_account` waits for accounts to close the accounts (or refuse)
    /// before answering `closing_accounts`.
    public var deletionWaitMilliseconds: Int64 = 3000
    /// Identity as a WebAuthn relying party.
    public var passkeys = PasskeyPolicy.development
    /// Which App Attest keys may vouch for device keys, and whether one must.
    public var appAttest = AppAttestSettings()

    public init() {}
}

/// The service's own flags (each also `LATCHKEY_<NAME>`), in one table for `protocol/identity.md`.
public enum IdentityOptions {
    public static let scryptLogN = ConfigOption("scrypt-log-n", default: "15", help: "scrypt cost: N = 2^value (10 for fast tests; 15 or more in production)")
    public static let scryptR = ConfigOption("scrypt-r", default: "8", help: "scrypt block size r")
    public static let scryptP = ConfigOption("scrypt-p", default: "1", help: "scrypt parallelism p")
    public static let passwordMinLength = ConfigOption("password-min-length", default: "8", help: "shortest password accepted, in characters")
    public static let breachedPasswords = ConfigOption("breached-passwords", help: "file of breached passwords, one a line, refused at register and set_password")
    public static let defaultCountry = ConfigOption("default-country", default: "US", help: "country of phone numbers given without +")
    public static let sessionLifetime = ConfigOption("session-lifetime-s", default: "43200", help: "absolute session lifetime, in seconds")
    public static let sessionIdle = ConfigOption("session-idle-s", default: "1800", help: "a session unused this long ends, in seconds")
    public static let loginFreeFailures = ConfigOption("login-free-failures", default: "5", help: "failed passwords per account before it is throttled")
    public static let loginBaseDelay = ConfigOption("login-base-delay-s", default: "30", help: "first lock after the free failures, doubling each further failure, in seconds")
    public static let loginMaxDelay = ConfigOption("login-max-delay-s", default: "900", help: "longest account lock, in seconds")
    public static let loginFailureDecay = ConfigOption("login-failure-decay-s", default: "300", help: "one counted failure is forgiven per this many seconds without one (at most half the longest lock)")
    public static let loginMaxConsecutive = ConfigOption("login-max-consecutive-failures", default: "100", help: "failures in a row (no decay) after which clients without a device token are refused until a success or a password change")
    public static let deviceTokenFreeFailures = ConfigOption("device-token-free-failures", default: "3", help: "failed passwords on one device token before it is throttled")
    public static let deviceTokenMaxFailures = ConfigOption("device-token-max-failures", default: "10", help: "failures in a row after which a device token is revoked")
    public static let deviceTokenLifetime = ConfigOption("device-token-lifetime-days", default: "90", help: "how long a device token exempts its device from the account's lock, in days")
    public static let maxDeviceTokensPerUser = ConfigOption("max-device-tokens-per-user", default: "10", help: "device tokens kept per user (the oldest go first)")
    public static let clientBurst = ConfigOption("login-client-burst", default: "20", help: "failed logins a client address may make at once")
    public static let clientRefill = ConfigOption("login-client-per-minute", default: "10", help: "failed logins a client address earns back per minute")
    public static let maxKeysPerUser = ConfigOption("max-keys-per-user", default: "5", help: "active device keys per user")
    public static let sitekeyMaxBytes = ConfigOption("sitekey-max-bytes", default: "16384", help: "largest sitekey image, in bytes")
    public static let auditRetention = ConfigOption("audit-retention-days", default: "400", help: "how long authentication events are kept, in days")
    public static let challengeBurst = ConfigOption("challenge-client-burst", default: "30", help: "challenges by username a client address may ask for at once")
    public static let challengeRefill = ConfigOption("challenge-client-per-minute", default: "30", help: "challenges by username a client address earns back per minute")
    public static let stepUpWindow = ConfigOption(
        "step-up-window-s", default: "600",
        help: "sensitive changes (keys, other sessions, turning factors off) need a second factor passed this recently, in seconds")

    public static let key = ConfigOption(
        "identity-key", help: "server key sealing TOTP secrets and keying recovery-code hashes: 64+ hex digits or 32+ bytes of text (default: generated once into <data dir>/identity.key, mode 0600)")
    public static let resetRemovesFactors = ConfigOption(
        "reset-removes-factors-days", default: "7",
        help: "a password reset removes the authenticator app and recovery codes set up within this many days (0: none)")

    public static let emailLinkTTL = ConfigOption(
        "email-link-ttl-s", default: "86400", help: "how long an e-mail verification or e-mail change link works, in seconds (300-604800)")
    public static let emailRevertDays = ConfigOption(
        "email-revert-days", default: "7", help: "how long the old address can undo an e-mail change, in days (1-30)")
    public static let phoneCoolingOff = ConfigOption(
        "phone-change-cooling-off-h", default: "72",
        help: "after a phone number change, SMS codes confirm no transfer for this many hours (0-720): the device key must")
    public static let deletionWait = ConfigOption(
        "deletion-wait-ms", default: "3000",
        help: "how long a deletion request waits for accounts to close the accounts before answering closing_accounts (0-8000)")
    public static let webauthnRPID = ConfigOption(
        "webauthn-rp-id", help: "the WebAuthn relying party id passkeys are bound to: the host of --public-url, or a registrable suffix of it (default: that host, else localhost)")
    public static let webauthnRPName = ConfigOption("webauthn-rp-name", help: "the name authenticators show beside a passkey (default: --brand)")
    public static let webauthnOrigins = ConfigOption(
        "webauthn-origins",
        help: "web origins allowed to run passkey ceremonies, comma-separated (default: --public-url's origin and https://<rp id>, which iOS apps present through their associated domains)")
    public static let webauthnFormats = ConfigOption(
        "webauthn-attestation-formats", default: "none,packed,apple", help: "passkey attestation formats accepted, comma-separated, of none, packed and apple")
    public static let maxPasskeysPerUser = ConfigOption("max-passkeys-per-user", default: "10", help: "passkeys per user")
    public static let appLinkScheme = ConfigOption("app-link-scheme", default: "latchkey", help: "the app's URL scheme in mailed deep links")

    public static let all: [ConfigOption] = [
        scryptLogN, scryptR, scryptP, passwordMinLength, breachedPasswords, defaultCountry, sessionLifetime, sessionIdle,
        loginFreeFailures, loginBaseDelay, loginMaxDelay, loginFailureDecay, loginMaxConsecutive, deviceTokenFreeFailures,
        deviceTokenMaxFailures, deviceTokenLifetime, maxDeviceTokensPerUser, clientBurst, clientRefill, maxKeysPerUser, sitekeyMaxBytes,
        auditRetention, challengeBurst, challengeRefill, stepUpWindow, key, CommonOptions.brand, resetRemovesFactors,
        emailLinkTTL, emailRevertDays, phoneCoolingOff, deletionWait, webauthnRPID, webauthnRPName, webauthnOrigins, webauthnFormats,
        maxPasskeysPerUser, appLinkScheme, HTTPOptions.publicURL,
    ] + appAttestOptions

    public static func settings(from configuration: Configuration) throws -> IdentitySettings {
        var settings = IdentitySettings()
        settings.scrypt = ScryptParameters(
            logN: try configuration.int(scryptLogN, range: 1...20), r: try configuration.int(scryptR, range: 1...32),
            p: try configuration.int(scryptP, range: 1...16))
        var breached = Set<String>()
        if let path = configuration.string(breachedPasswords), !path.isEmpty {
            do {
                breached = try PasswordPolicy.loadBreachedList(path: path)
            } catch {
                throw ConfigurationError("\(breachedPasswords.flag): cannot read the file")
            }
        }
        settings.policy = PasswordPolicy(minimumLength: try configuration.int(passwordMinLength, range: 1...64), breached: breached)
        guard let country = PhoneCountry(try configuration.requiredString(defaultCountry)) else {
            throw ConfigurationError("\(defaultCountry.flag) must be one of \(PhoneCountry.table.keys.sorted().joined(separator: ", "))")
        }
        settings.defaultCountry = country
        settings.sessionLifetimeSeconds = Int64(try configuration.int(sessionLifetime, range: 60...(90 * 86_400)))
        settings.sessionIdleSeconds = Int64(try configuration.int(sessionIdle, range: 30...(90 * 86_400)))
        settings.lastSeenGranularitySeconds = min(15, settings.sessionIdleSeconds / 4)
        try readLoginBudgets(configuration, into: &settings)
        settings.clientBurst = try configuration.int(clientBurst, range: 1...1_000_000)
        settings.clientRefillPerMinute = try configuration.int(clientRefill, range: 1...1_000_000)
        settings.maxKeysPerUser = try configuration.int(maxKeysPerUser, range: 1...100)
        settings.sitekeyMaxBytes = try configuration.int(sitekeyMaxBytes, range: 64...(32 * 1024))
        settings.auditRetentionSeconds = Int64(try configuration.int(auditRetention, range: 1...36_500)) * 86_400
        settings.challengeBurst = try configuration.int(challengeBurst, range: 1...1_000_000)
        settings.challengeRefillPerMinute = try configuration.int(challengeRefill, range: 1...1_000_000)
        settings.stepUpWindowSeconds = Int64(try configuration.int(stepUpWindow, range: 1...86_400))
        settings.resetRemovesFactorsSetUpWithinSeconds = Int64(try configuration.int(resetRemovesFactors, range: 0...365)) * 86_400
        settings.brand = try configuration.brand()
        settings.emailLinkSeconds = Int64(try configuration.int(emailLinkTTL, range: 300...(7 * 86_400)))
        settings.emailRevertSeconds = Int64(try configuration.int(emailRevertDays, range: 1...30)) * 86_400
        settings.phoneChangeCoolingOffSeconds = Int64(try configuration.int(phoneCoolingOff, range: 0...720)) * 3600
        settings.deletionWaitMilliseconds = Int64(try configuration.int(deletionWait, range: 0...8000))
        let scheme = try configuration.requiredString(appLinkScheme)
        guard AccountLinks.isValidScheme(scheme) else {
            throw ConfigurationError("\(appLinkScheme.flag) must be a URL scheme: a letter, then letters, digits, '+', '-' or '.' (at most 32)")
        }
        settings.accountLinks = AccountLinks(scheme: scheme, publicOrigin: try HTTPOptions.publicOrigin(configuration))
        settings.passkeys = try passkeyPolicy(configuration, publicOrigin: settings.accountLinks.publicOrigin, brand: settings.brand)
        settings.appAttest = try appAttestSettings(configuration)
        return settings
    }

    private static func passkeyPolicy(_ configuration: Configuration, publicOrigin: String?, brand: String) throws -> PasskeyPolicy {
        let publicHost = publicOrigin.map { String($0.dropFirst("https://".count).prefix { $0 != ":" }) }
        let rpID = configuration.string(webauthnRPID).flatMap { $0.isEmpty ? nil : $0.lowercased() } ?? publicHost ?? "localhost"
        guard PasskeyPolicy.isValidRPID(rpID) else {
            throw ConfigurationError("\(webauthnRPID.flag) must be a host name such as bank.example.com (letters, digits, '-' and '.')")
        }
        if let publicHost, publicHost != rpID, !publicHost.hasSuffix("." + rpID) {
            throw ConfigurationError("\(webauthnRPID.flag) must be \(publicHost) or a suffix of it after a dot: passkeys are bound to the origin's host")
        }
        var origins = HTTPOptions.list(configuration, webauthnOrigins)
        if origins.isEmpty { origins = (publicOrigin.map { [$0] } ?? []) + ["https://\(rpID)"] }
        for origin in origins where !PasskeyPolicy.isOrigin(origin, within: rpID) {
            throw ConfigurationError(
                "\(webauthnOrigins.flag): \(origin) must be an https:// origin (http:// only for localhost) whose host is \(rpID) or under it")
        }
        var formats = Set<AttestationFormat>()
        for name in HTTPOptions.list(configuration, webauthnFormats) {
            guard let format = AttestationFormat(rawValue: name) else {
                throw ConfigurationError("\(webauthnFormats.flag): \(name) is not one of none, packed, apple")
            }
            formats.insert(format)
        }
        guard !formats.isEmpty else { throw ConfigurationError("\(webauthnFormats.flag) must name at least one format") }
        let name = configuration.string(webauthnRPName).flatMap { $0.isEmpty ? nil : $0 } ?? brand
        guard name.utf8.count <= 64 else { throw ConfigurationError("\(webauthnRPName.flag) must be at most 64 bytes") }
        var policy = PasskeyPolicy(
            relyingParty: RelyingParty(id: rpID, origins: Array(Set(origins)).sorted(), allowedFormats: formats), name: name)
        policy.maxPerUser = try configuration.int(maxPasskeysPerUser, range: 1...100)
        return policy
    }

    private static func readLoginBudgets(_ configuration: Configuration, into settings: inout IdentitySettings) throws {
        let baseDelay = Int64(try configuration.int(loginBaseDelay, range: 1...86_400))
        let maximumDelay = max(baseDelay, Int64(try configuration.int(loginMaxDelay, range: 1...86_400)))
        let decay = Int64(try configuration.int(loginFailureDecay, range: 1...86_400))
        guard decay * 2 <= maximumDelay else {
            throw ConfigurationError("\(loginFailureDecay.flag) must be at most half of \(loginMaxDelay.flag) (\(maximumDelay / 2))")
        }
        let freeFailures = try configuration.int(loginFreeFailures, range: 1...100)
        let tokenFreeFailures = try configuration.int(deviceTokenFreeFailures, range: 1...100)
        settings.accountThrottle = AccountThrottlePolicy(
            freeFailures: freeFailures, baseDelaySeconds: baseDelay, maximumDelaySeconds: maximumDelay, decaySeconds: decay,
            maximumConsecutiveFailures: try configuration.int(loginMaxConsecutive, range: freeFailures...100))
        settings.deviceTokenThrottle = AccountThrottlePolicy(
            freeFailures: tokenFreeFailures, baseDelaySeconds: baseDelay, maximumDelaySeconds: maximumDelay, decaySeconds: decay,
            maximumConsecutiveFailures: try configuration.int(deviceTokenMaxFailures, range: tokenFreeFailures...100))
        settings.deviceTokenLifetimeSeconds = Int64(try configuration.int(deviceTokenLifetime, range: 1...3650)) * 86_400
        settings.maxDeviceTokensPerUser = try configuration.int(maxDeviceTokensPerUser, range: 1...100)
    }
}
