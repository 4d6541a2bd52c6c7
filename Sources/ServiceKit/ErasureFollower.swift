import Contract
import LineProtocol
import Platform
import RPC
import Runtime

/// A service's part of account deletions. Identity keeps the one durable record of each; this
/// follower asks it, every `--erasure-poll-ms`, for the erasures due to this service, applies
/// each through `erase` (which must be idempotent: a report lost to a stop is redone after the
/// restart) and reports the outcome. A service that is down simply catches up when it is back.
public final class ErasureFollower: Sendable {
    public static let pollMilliseconds = ConfigOption(
        "erasure-poll-ms", default: "250", help: "how often this service asks identity for what it follows: account deletions to erase (verification: also phone-change SMS notices)")

    /// One deletion as identity hands it out.
    public struct Erasure: Sendable, Equatable {
        public let userID: String
        /// The name kept for the rows the law makes us keep (the ledger).
        public let pseudonym: String
        public let email: String?
        public let phone: String?

        public init(userID: String, pseudonym: String, email: String?, phone: String?) {
            (self.userID, self.pseudonym, self.email, self.phone) = (userID, pseudonym, email, phone)
        }
    }

    public enum Outcome: Sendable, Equatable {
        case done
        /// Nothing erased, for a documented reason (accounts: `balance_not_zero`, with the balances).
        case refused(detail: String, balances: JSON)
    }

    private let service: String
    private let identity: any IdentityDirectory
    private let erase: @Sendable (Erasure) throws -> Outcome
    private let logger: Logger
    private let failures: FailureLog

    public init(service: String, identity: any IdentityDirectory, logger: Logger, erase: @escaping @Sendable (Erasure) throws -> Outcome) {
        precondition(AccountDeletionContract.followers.contains(service))
        self.service = service
        self.identity = identity
        self.logger = logger.with(["erasure.service": .string(service)])
        self.erase = erase
        failures = FailureLog("account erasure pass", logger: self.logger)
    }

    /// Polls from the host's loop; each pass runs on a worker, never two at once.
    public func start(on host: ServiceHost) throws {
        try PeriodicPass.followingIdentity(on: host) { [self] in runPass() }
    }

    /// Asks for what is due and does it; errors are logged and retried at the next pass.
    /// Answers how many erasures were reported.
    @discardableResult
    public func runPass() -> Int {
        let context = PeriodicPass.callContext(AccountDeletionContract.erasuresDue, requestID: "erasure-\(service)", logger: logger)
        var reported = 0
        do {
            let answer = try identity.callAndWait(
                AccountDeletionContract.erasuresDue, ["service": .string(service), "limit": 16], context: context)
            for item in answer["erasures"]?.arrayValue ?? [] {
                guard let userID = item["user_id"]?.stringValue, let pseudonym = item["pseudonym"]?.stringValue else { continue }
                let erasure = Erasure(
                    userID: userID, pseudonym: pseudonym, email: item["email"]?.stringValue, phone: item["phone"]?.stringValue)
                var report: [String: JSON] = ["service": .string(service), "user_id": .string(userID)]
                switch try erase(erasure) {
                case .done:
                    report["outcome"] = "done"
                case .refused(let detail, let balances):
                    report["outcome"] = "refused"
                    report["detail"] = .string(detail)
                    report["balances"] = balances
                }
                _ = try identity.callAndWait(AccountDeletionContract.erasureDone, report, context: context)
                reported += 1
            }
            failures.succeeded()
        } catch {
            failures.failed(String(describing: error))
        }
        return reported
    }
}
