import StackLauncher

/// `ping`: the protocol's own cost. Direct to a service is the baseline; through the gateway
/// adds one hop (the gateway forwards `identity.ping`), held to the direct rate measured right
/// before and right after it; `gateway.ping` is answered by the gateway itself and held to
/// Redis's `PING_INLINE` at the same connections and pipeline depth, measured the same way
/// (the machine's load drifts within a run, and one baseline on one side of a row skews it). With several event
/// loops per process, the same rows again with one loop show what the loops buy.
enum PingBench {
    static func run(_ environment: BenchEnvironment, target: String, report: BenchReport) throws {
        let settings = environment.settings
        let label = "c=\(settings.connections) k=\(settings.inflight)"
        let loops = environment.eventLoops
        let many = try measure(environment, target: target, label: "\(label) loops=\(loops)", report: report)
        guard target == "both", loops > 1 else { return }
        let single = BenchEnvironment(settings: settings, explicitGateway: nil, eventLoops: 1)
        defer { single.shutdown() }
        let one = try measure(single, target: target, label: "\(label) loops=1", report: report)
        for (name, result) in [("gateway.ping", many.gatewayPing), ("identity.ping via gateway", many.viaGateway)] {
            let baseline = name == "gateway.ping" ? one.gatewayPing : one.viaGateway
            guard var result, let baseline else { continue }
            result.costPerOperation = []  // printed under its own row already
            report.row("\(name) \(loops) loops vs 1", result, ratioTo: ("1 loop", baseline.perSecond))
        }
    }

    private struct Figures {
        var gatewayPing: LoadResult?
        var viaGateway: LoadResult?
    }

    private static func measure(_ environment: BenchEnvironment, target: String, label: String, report: BenchReport) throws -> Figures {
        let settings = environment.settings
        var figures = Figures()
        var direct: LoadResult?
        let service = target == "both" ? "identity" : target
        func measureDirect() throws -> LoadResult {
            try LoadGenerator.pipelined(
                endpoint: try environment.direct(service), method: "\(service).ping", params: nil, settings: settings, watching: try environment.watched([service]))
        }
        if target == "both" || (target != "gateway" && Stack.portOffsets[target] != nil) {
            let result = try measureDirect()
            report.row("ping direct \(service) \(label)", result)
            direct = result
        }
        if target == "both" || target == "gateway" {
            let result = try LoadGenerator.pipelined(
                endpoint: try environment.gateway, method: "identity.ping", params: nil, settings: settings,
                watching: try environment.watched(["gateway", "identity"]))
            var baseline: (label: String, perSecond: Double)?
            if let before = direct {
                let after = try measureDirect()
                report.row("ping direct \(service) \(label) again", after)
                let mean = (before.perSecond + after.perSecond) / 2
                report.ceiling("ping direct \(service) \(label)", perSecond: mean, before: before.perSecond, after: after.perSecond, as: .baseline)
                baseline = ("direct", mean)
            }
            report.row("ping via gateway \(label)", result, ratioTo: baseline)
            figures.viaGateway = result
            let redisBefore = RedisCeilingBench.measure(connections: settings.connections, inflight: settings.inflight)
            let own = try LoadGenerator.pipelined(
                endpoint: try environment.gateway, method: "gateway.ping", params: nil, settings: settings, watching: try environment.watched(["gateway"]))
            var redis: Double?
            if let redisBefore, let redisAfter = RedisCeilingBench.measure(connections: settings.connections, inflight: settings.inflight) {
                let mean = (redisBefore + redisAfter) / 2
                report.ceiling("redis PING_INLINE \(label)", perSecond: mean, before: redisBefore, after: redisAfter)
                redis = mean
            }
            report.row("gateway.ping \(label)", own, ratioTo: redis.map { ("redis", $0) })
            figures.gatewayPing = own
        }
        return figures
    }
}
