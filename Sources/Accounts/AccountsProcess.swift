import FoundationEssentials
import LineProtocol
import ServiceKit
import Storage

/// Builds the accounts service from configuration and serves until SIGTERM.
public enum AccountsProcess {
    public static let currency = ConfigOption("currency", default: "USD", help: "ISO 4217 code of every account")
    public static let maxAmountMinor = ConfigOption(
        "max-amount-minor", default: "100000000", help: "largest transfer or deposit, in minor units")
    public static let transferExpirySeconds = ConfigOption(
        "transfer-expiry-s", default: "300", help: "a pending transfer and its code expire after this long")
    public static let groupCommitMax = ConfigOption(
        "group-commit-max", default: "64", help: "writes sharing one transaction (1 = one commit per write); SQLite only, PostgreSQL commits each write alone")
    public static let key = ConfigOption(
        "accounts-key",
        help: "server key sealing history cursors: 64+ hex digits or 32+ bytes of text (default: generated once into <data dir>/accounts.key, mode 0600; with --database-url required, the same on every replica)")
    public static let options = [currency, maxAmountMinor, transferExpirySeconds, groupCommitMax, CommonOptions.brand, key, ErasureFollower.pollMilliseconds]

    public static func run(arguments: [String], environment: [String: String]) throws -> Int32 {
        let host = try ServiceHost(name: "accounts", defaultPort: 7403, arguments: arguments, environment: environment, extraOptions: options)
        let configuration = host.configuration
        var settings = AccountsSettings()
        settings.currency = try configuration.requiredString(currency)
        guard settings.currency.utf8.count == 3, settings.currency.utf8.allSatisfy({ (65...90).contains($0) }) else {
            throw ConfigurationError("--currency must be three capital letters (ISO 4217)")
        }
        settings.maxAmountMinor = Int64(try configuration.int(maxAmountMinor, range: 1...1_000_000_000_000))
        let expiry = AccountsSettings.transferExpiryRange
        guard let seconds = Int(try configuration.requiredString(transferExpirySeconds)), expiry.contains(seconds) else {
            throw ConfigurationError(
                "\(transferExpirySeconds.flag) must be \(expiry.lowerBound)-\(expiry.upperBound) (seconds): a transfer's SMS code "
                    + "lives as long as the transfer, and verification gives a code a life in that range only")
        }
        settings.transferExpirySeconds = Int64(seconds)
        settings.brand = try configuration.brand()
        let database = try host.openDatabase(
            sqliteFile: "accounts.sqlite", sqlite: LedgerSchema.sqlite, postgres: LedgerSchema.postgres,
            sqliteOptions: DatabaseOptions(synchronous: .full))
        settings.serverKey = try ServerKeyFile.load(
            path: try host.dataFile("accounts.key"), configured: configuration.string(key), option: "--accounts-key",
            shared: database.dialect == .postgres, service: "accounts",
            consequence: "a key file per replica would refuse the history cursors the others issued")
        let store = SQLLedgerStore(database: database, groupCommitMax: try configuration.int(groupCommitMax, range: 1...10_000))
        let verification = RPCVerification(client: try host.client(for: "verification", option: CommonOptions.verification))
        let identity = try host.client(for: "identity", option: CommonOptions.identity)
        let service = AccountsService(
            store: store, verification: verification, deviceKeys: RPCDeviceKeys(client: identity), settings: settings, metrics: host.metrics)
        let sessions = SessionResolver(identity: identity)
        AccountsRoutes.register(on: host.router, service: service, sessions: sessions)
        try ErasureFollower(service: "accounts", identity: RPCIdentityDirectory(client: identity), logger: host.logger) { erasure in
            try service.erase(erasure)
        }.start(on: host)
        host.addHealthCheck {
            let statistics = store.groupCommitStatistics
            return ("ledger", ["batches": .int(Int64(statistics.batches)), "writes": .int(Int64(statistics.jobs))])
        }
        host.logger.info("ledger open", ["db.backend": .string(database.dialect.rawValue), "accounts.currency": .string(settings.currency)])
        return host.run()
    }
}
