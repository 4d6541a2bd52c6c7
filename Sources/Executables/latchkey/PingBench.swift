import ServiceKit

/// `ping`: the protocol's own cost. Direct to a service is the baseline; through the
/// gateway adds one hop (the gateway forwards `identity.ping`).
enum PingBench {
    static func run(_ environment: BenchEnvironment, target: String, report: BenchReport) throws {
        let settings = environment.settings
        let label = "c=\(settings.connections) k=\(settings.inflight)"
        var direct: LoadResult?
        if target == "both" || (target != "gateway" && Stack.portOffsets[target] != nil) {
            let service = target == "both" ? "identity" : target
            let result = try LoadGenerator.pipelined(endpoint: try environment.direct(service), method: "\(service).ping", params: nil, settings: settings)
            report.row("ping direct \(service) \(label)", result)
            direct = result
        }
        if target == "both" || target == "gateway" {
            let result = try LoadGenerator.pipelined(endpoint: try environment.gateway, method: "identity.ping", params: nil, settings: settings)
            report.row("ping via gateway \(label)", result, ratioTo: direct.map { ("direct", $0.perSecond) })
        }
    }
}
