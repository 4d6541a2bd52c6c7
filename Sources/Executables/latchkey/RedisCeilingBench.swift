import FoundationEssentials
import Glibc
import Platform
import RPC

/// The peer `bench ping` is held to: Redis answering `PING_INLINE` to redis-benchmark with the
/// same connections and pipeline depth, on the same machine, in the same run. Runs only when
/// `redis-server` and `redis-benchmark` are installed; starts its own server on a free port and
/// stops it before returning.
enum RedisCeilingBench {
    /// About 2,500 round trips per pipeline slot (2,000,000 requests at 50 x 16, about a second
    /// and a half here), so that a small run stays short.
    static func measure(connections: Int, inflight: Int) -> Double? {
        let requests = min(2_000_000, max(10_000, connections * inflight * 2_500))
        guard let benchmark = executable("redis-benchmark"), let redis = RedisPeer.start() else { return nil }
        defer { redis.stop() }
        let port = redis.port
        let arguments = [
            "-h", "127.0.0.1", "-p", String(port), "-c", String(connections), "-P", String(inflight), "-t", "ping_inline",
            "-n", String(requests), "-q",
        ]
        guard let output = try? ChildPipe() else { return nil }
        defer { close(output.readEnd) }
        let run = try? ChildProcess(
            executable: benchmark, arguments: arguments, environment: ProcessInfo.processInfo.environment,
            standardOutput: .descriptor(output.writeEnd), standardError: .null)
        close(output.writeEnd)
        guard let run else { return nil }
        let text = String(decoding: output.readToEnd(), as: UTF8.self)
        run.waitUntilExit()
        return requestsPerSecond(in: text)
    }

    /// The figure from redis-benchmark's last `PING_INLINE: N requests per second` (progress lines end in `\r`).
    static func requestsPerSecond(in output: String) -> Double? {
        let lines = output.split(whereSeparator: { $0 == "\n" || $0 == "\r" })
        guard let line = lines.last(where: { $0.hasPrefix("PING_INLINE:") && $0.contains("requests per second") }) else { return nil }
        let words = line.split(separator: " ")
        return words.count > 1 ? Double(words[1]) : nil
    }

    static func executable(_ name: String) -> String? {
        for directory in ["/usr/bin", "/usr/local/bin", "/usr/sbin"] {
            let path = directory + "/" + name
            if access(path, X_OK) == 0 { return path }
        }
        return nil
    }

    /// A port the kernel just gave out and took back (another process could take it first: then Redis fails to start and no ceiling is printed).
    static func freePort() -> Int? {
        guard let socket = try? Socket.listen(on: SocketAddress.resolve(host: "127.0.0.1", port: 0)[0]) else { return nil }
        defer { socket.close() }
        return socket.localAddress?.port
    }

    static func waitUntilListening(port: Int, timeoutMilliseconds: Int64) -> Bool {
        let deadline = MonotonicClock.nowMilliseconds() + timeoutMilliseconds
        while MonotonicClock.nowMilliseconds() < deadline {
            if (try? LineClient(Endpoint(host: "127.0.0.1", port: port), timeoutMilliseconds: 500)) != nil { return true }
            Pause.milliseconds(20)
        }
        return false
    }
}
