import Foundation
import LineProtocol
import Platform
import RPC
import Secrets

/// The measurements behind `latchkey bench login`: successful logins per second through a
/// gateway, next to the bare scrypt verifications per second of the same parameters on the
/// same machine (the ceiling: a login is one scrypt verify plus a small write).
public enum LoginBenchmark {
    public struct Figures: Sendable {
        public var loginsPerSecond: Double
        public var scryptPerSecond: Double
        public var logins: Int
        public var errors: Int
        /// Logins/s as a fraction of scrypt/s (the goal: at least 0.9).
        public var ratio: Double { scryptPerSecond > 0 ? loginsPerSecond / scryptPerSecond : 0 }
    }

    /// Bare `PasswordHasher.verify` calls per second on `threads` threads for about `seconds`.
    public static func scryptVerificationsPerSecond(parameters: ScryptParameters, threads: Int, seconds: Double) throws -> Double {
        precondition(threads >= 1 && seconds > 0)
        let hash = try PasswordHasher.hash("benchmark password", parameters: parameters)
        let counter = Counter()
        let deadline = Date().addingTimeInterval(seconds)
        let group = DispatchGroup()
        let start = Date()
        for _ in 0..<threads {
            group.enter()
            Thread.detachNewThread {
                while Date() < deadline {
                    _ = PasswordHasher.verify("benchmark password", against: hash)
                    counter.add(ok: true)
                }
                group.leave()
            }
        }
        group.wait()
        return Double(counter.ok) / Date().timeIntervalSince(start)
    }

    /// CPU seconds one `PasswordHasher.verify` costs (thread CPU time, so other load on the
    /// machine does not inflate it), the median of `count` runs.
    public static func scryptCPUSecondsPerVerification(parameters: ScryptParameters, count: Int) throws -> Double {
        precondition(count >= 1)
        let hash = try PasswordHasher.hash("benchmark password", parameters: parameters)
        var samples: [Double] = []
        for _ in 0..<count {
            let before = threadCPUSeconds()
            _ = PasswordHasher.verify("benchmark password", against: hash)
            samples.append(threadCPUSeconds() - before)
        }
        return samples.sorted()[samples.count / 2]
    }

    private static func threadCPUSeconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// Registers a user through `gateway`, then logs in over `connections` connections for about
    /// `seconds`, each login on a new device id (the full path: throttle checks, scrypt, session
    /// write). Successful logins per second, and the errors seen.
    public static func loginsPerSecond(gateway: Endpoint, connections: Int, seconds: Double) throws -> (perSecond: Double, logins: Int, errors: Int) {
        precondition(connections >= 1 && seconds > 0)
        let (username, password) = try registerUser(gateway: gateway)
        let counter = Counter()
        let deadline = Date().addingTimeInterval(seconds)
        let group = DispatchGroup()
        let start = Date()
        for index in 0..<connections {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                guard let client = try? LineClient(gateway, timeoutMilliseconds: 30_000) else {
                    counter.add(ok: false)
                    return
                }
                var attempt = 0
                while Date() < deadline {
                    attempt += 1
                    let params: JSON = [
                        "username": .string(username), "password": .string(password), "device_id": .string("bench-\(index)-\(attempt)"),
                    ]
                    let ok = (try? client.result("identity.login", params))?["session"] != nil
                    counter.add(ok: ok)
                }
            }
        }
        group.wait()
        return (Double(counter.ok) / Date().timeIntervalSince(start), counter.ok, counter.failed)
    }

    /// Registers a fresh user for benchmarking through `gateway`; returns its username and password.
    public static func registerUser(gateway: Endpoint) throws -> (username: String, password: String) {
        let username = "bench" + Base64URL.encode(SecureRandom.bytes(6)).lowercased().filter { $0.isLetter || $0.isNumber }
        let password = "bench passphrase " + Base64URL.encode(SecureRandom.bytes(9))
        let setup = try LineClient(gateway)
        _ = try setup.result("identity.register", [
            "username": .string(username), "password": .string(password), "email": .string("\(username)@example.com"), "phone": "5555550100",
        ])
        return (username, password)
    }

    /// Both figures, scrypt first (on as many threads as the machine has cores).
    public static func run(gateway: Endpoint, parameters: ScryptParameters, connections: Int, seconds: Double) throws -> Figures {
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let scrypt = try scryptVerificationsPerSecond(parameters: parameters, threads: max(1, cores), seconds: seconds)
        let logins = try loginsPerSecond(gateway: gateway, connections: connections, seconds: seconds)
        return Figures(loginsPerSecond: logins.perSecond, scryptPerSecond: scrypt, logins: logins.logins, errors: logins.errors)
    }

    private final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private(set) var ok = 0
        private(set) var failed = 0
        func add(ok succeeded: Bool) {
            lock.lock()
            if succeeded { ok += 1 } else { failed += 1 }
            lock.unlock()
        }
    }
}
