import FoundationEssentials
import Platform

/// `latchkey bench long`: login, verify and transfer on a fresh stack, then on a stack whose
/// databases already hold a long history (`HistoryPreload`: 100,000 users with sessions and
/// audit trails, a million sent codes, a million ledger rows), in the same run. Each flow's
/// rate with history is printed as a ratio to its rate without: cost must not grow with history.
enum LongHistoryBench {
    static func run(settings: BenchSettings, report: BenchReport) throws {
        let empty = try measure(settings: settings, report: report, preload: nil)
        let preload = HistoryPreload()
        let long = try measure(settings: settings, report: report) { directory in
            let started = Date()
            try preload.write(into: directory)
            let seconds = Date().timeIntervalSince(started)
            print("history preloaded in \(seconds.fixed(1)) s: \(preload.users) users, \(preload.sends) sends, \(preload.ledgerRows) ledger rows")
        }
        for ((flow, result), (_, baseline)) in zip(long, empty) {
            report.row("\(flow) with long history", result, ratioTo: ("empty database", baseline.perSecond))
        }
    }

    /// The three flows on one fresh stack, its data directory prepared by `preload` first.
    private static func measure(settings: BenchSettings, report: BenchReport, preload: ((String) throws -> Void)?) throws -> [(String, LoadResult)] {
        let environment = BenchEnvironment(settings: settings, explicitGateway: nil)
        environment.beforeStart = preload
        defer { environment.shutdown() }
        return [
            ("login", try LoginBench.run(environment, report: report)),
            ("verify", try VerifyBench.run(environment, report: report)),
            ("transfer", try TransferBench.run(environment, report: report)),
        ]
    }
}
