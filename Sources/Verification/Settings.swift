import Delivery
import FoundationEssentials
import Platform
import ServiceKit

/// The verification service's own options (flags and `LATCHKEY_*` variables). Each limit is
/// named with its unit; protocol/verification.md has the operator's table.
public enum VerificationOptions {
    public static let key = ConfigOption(
        "verification-key",
        help: "server key for code and payload hashes: 64+ hex digits or 32+ bytes of text (default: generated once into <data dir>/verification.key, mode 0600; with --database-url required, the same on every replica)")
    public static let defaultLocale = ConfigOption("verification-locale", default: "en", help: "message language when the caller gives none: en, fr or ru")
    public static let publicWorkflow = ConfigOption(
        "verification-public-workflow", default: "sms_voice_voice", help: "workflow of a public start without `channel`")
    public static let publicNextWaitSeconds = ConfigOption(
        "verification-public-next-wait-s", default: "120", help: "next_event_wait_s of a public start")
    public static let minimumNextWaitSeconds = ConfigOption(
        "verification-min-next-wait-s", default: "60",
        help: "smallest next_event_wait_s a caller may ask for (tests lower it to 1; production keeps 60)")
    public static let maxAttempts = ConfigOption("verification-max-attempts", default: "3", help: "wrong codes before a request fails")
    public static let allowedCountries = ConfigOption(
        "verification-countries", default: "*", help: "ISO 3166 alpha-2 codes of the countries codes may be sent to, comma-separated, or * for all")
    public static let sendsPerNumber10m = ConfigOption("verification-sends-per-number-10m", default: "3", help: "messages to one number per 10 minutes")
    public static let sendsPerNumberDay = ConfigOption("verification-sends-per-number-day", default: "10", help: "messages to one number per 24 hours")
    public static let proofSendsPerNumber10m = ConfigOption(
        "verification-proof-sends-per-number-10m", default: "2",
        help: "phone-proof codes to one number per 10 minutes, all unproven users together (a budget apart from the owner's)")
    public static let proofSendsPerNumberDay = ConfigOption(
        "verification-proof-sends-per-number-day", default: "5", help: "phone-proof codes to one number per 24 hours")
    public static let sendsPerUser10m = ConfigOption("verification-sends-per-user-10m", default: "5", help: "messages for one user per 10 minutes")
    public static let sendsPerUserDay = ConfigOption("verification-sends-per-user-day", default: "20", help: "messages for one user per 24 hours")
    public static let sendsPerClient10m = ConfigOption("verification-sends-per-client-10m", default: "10", help: "messages started from one client address per 10 minutes")
    public static let sendsPerClientDay = ConfigOption("verification-sends-per-client-day", default: "50", help: "messages started from one client address per 24 hours")
    public static let sendsGlobalHour = ConfigOption("verification-sends-global-hour", default: "1000", help: "messages per hour, the spending budget: of this replica (SQLite), of all replicas together (PostgreSQL)")
    public static let sendsGlobalDay = ConfigOption("verification-sends-global-day", default: "10000", help: "messages per 24 hours: of this replica (SQLite), of all replicas together (PostgreSQL)")
    public static let tickMilliseconds = ConfigOption("verification-tick-ms", default: "250", help: "how often due workflow steps are looked for")
    public static let deliveryWorkers = ConfigOption(
        "delivery-workers", default: "4", help: "threads sending queued messages to the providers (request workers never wait for a provider)")

    public static let all: [ConfigOption] = [
        key, CommonOptions.brand, defaultLocale, publicWorkflow, publicNextWaitSeconds, minimumNextWaitSeconds, maxAttempts,
        allowedCountries, sendsPerNumber10m, sendsPerNumberDay, proofSendsPerNumber10m, proofSendsPerNumberDay, sendsPerUser10m, sendsPerUserDay,
        sendsPerClient10m, sendsPerClientDay, sendsGlobalHour, sendsGlobalDay, tickMilliseconds, deliveryWorkers,
    ]
}

/// One sliding-window limit: at most `count` messages in `windowSeconds`.
public struct SendLimit: Sendable, Equatable {
    public var count: Int
    public var windowSeconds: Int64

    public init(count: Int, windowSeconds: Int64) {
        self.count = count
        self.windowSeconds = windowSeconds
    }
}

/// What the service logic needs to know, already validated. Tests build it directly.
public struct VerificationSettings: Sendable {
    public var replicaID: String
    /// Request ids name their replica (SQLite: each replica keeps its own requests). Off when the
    /// replicas share one PostgreSQL database, so any of them serves any request.
    public var requestIDsNameReplica = true
    public var brand = "Latchkey"
    public var defaultLocale = MessageLocale.english
    public var publicWorkflow = Workflow.smsVoiceVoice
    public var publicNextWaitSeconds: Int64 = 120
    public var minimumNextWaitSeconds: Int64 = 60
    public var maximumNextWaitSeconds: Int64 = 900
    public var defaultCodeLength = 6
    /// A second factor (purpose `login`) never gets a shorter code.
    public var minimumLoginCodeLength = 6
    public var defaultCodeExpirySeconds: Int64 = 300
    public var maxAttempts = 3
    /// nil = every country.
    public var allowedCountries: Set<String>?
    public var perNumber = [SendLimit(count: 3, windowSeconds: 600), SendLimit(count: 10, windowSeconds: 86_400)]
    /// Phone-proof codes to one number, counted apart from `perNumber`: a stranger who claims
    /// the number can neither spend its owner's budget nor flood the phone.
    public var perProofNumber = [SendLimit(count: 2, windowSeconds: 600), SendLimit(count: 5, windowSeconds: 86_400)]
    public var perUser = [SendLimit(count: 5, windowSeconds: 600), SendLimit(count: 20, windowSeconds: 86_400)]
    public var perClient = [SendLimit(count: 10, windowSeconds: 600), SendLimit(count: 50, windowSeconds: 86_400)]
    public var global = [SendLimit(count: 1000, windowSeconds: 3600), SendLimit(count: 10_000, windowSeconds: 86_400)]
    /// Finished requests and send counters are kept this long, then pruned.
    public var retentionSeconds: Int64 = 86_400 * 7
    public var delivery = DeliveryQueueSettings()

    public init(replicaID: String) { self.replicaID = replicaID }

    public init(replicaID: String, configuration: Configuration) throws(ConfigurationError) {
        self.replicaID = replicaID
        brand = try configuration.brand()
        guard let locale = MessageLocale(rawValue: configuration.string(VerificationOptions.defaultLocale) ?? "en") else {
            throw ConfigurationError("--verification-locale must be en, fr or ru")
        }
        defaultLocale = locale
        guard let workflow = Workflow(rawValue: configuration.string(VerificationOptions.publicWorkflow) ?? ""), !workflow.usesEmail else {
            throw ConfigurationError("--verification-public-workflow must be sms, voice, sms_voice, sms_voice_voice or sms_sms_voice")
        }
        publicWorkflow = workflow
        minimumNextWaitSeconds = Int64(try configuration.int(VerificationOptions.minimumNextWaitSeconds, range: 1...900))
        publicNextWaitSeconds = Int64(try configuration.int(VerificationOptions.publicNextWaitSeconds, range: Int(minimumNextWaitSeconds)...900))
        maxAttempts = try configuration.int(VerificationOptions.maxAttempts, range: 1...10)
        let countries = configuration.string(VerificationOptions.allowedCountries) ?? "*"
        if countries.trimmingWhitespace() != "*" {
            let codes = countries.split(separator: ",").map { $0.trimmingWhitespace().uppercased() }
            guard !codes.isEmpty, codes.allSatisfy({ $0.count == 2 && $0.allSatisfy(\.isLetter) }) else {
                throw ConfigurationError("--verification-countries must be * or ISO alpha-2 codes such as US,FR")
            }
            allowedCountries = Set(codes)
        }
        func limit(_ option: ConfigOption, _ window: Int64) throws(ConfigurationError) -> SendLimit {
            SendLimit(count: try configuration.int(option, range: 1...100_000_000), windowSeconds: window)
        }
        perNumber = [try limit(VerificationOptions.sendsPerNumber10m, 600), try limit(VerificationOptions.sendsPerNumberDay, 86_400)]
        perProofNumber = [
            try limit(VerificationOptions.proofSendsPerNumber10m, 600), try limit(VerificationOptions.proofSendsPerNumberDay, 86_400),
        ]
        perUser = [try limit(VerificationOptions.sendsPerUser10m, 600), try limit(VerificationOptions.sendsPerUserDay, 86_400)]
        perClient = [try limit(VerificationOptions.sendsPerClient10m, 600), try limit(VerificationOptions.sendsPerClientDay, 86_400)]
        global = [try limit(VerificationOptions.sendsGlobalHour, 3600), try limit(VerificationOptions.sendsGlobalDay, 86_400)]
        delivery.maxAttempts = try configuration.int(ProviderFactory.deliveryAttempts, range: 1...10)
        delivery.initialBackoffMilliseconds = Int64(try configuration.int(ProviderFactory.deliveryBackoffMilliseconds, range: 0...60_000))
    }
}

