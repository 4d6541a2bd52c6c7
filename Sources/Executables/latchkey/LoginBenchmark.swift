import Dispatch
import FoundationEssentials
import LineProtocol
import Platform
import RPC
import Secrets

/// What the login benches share: the ceiling a login is measured against (bare scrypt
/// verifications per second of the same parameters on the same machine: a login is one scrypt
/// verify plus a small write), and fresh users to log in as.
enum LoginBenchmark {
    /// Bare `PasswordHasher.verify` calls per second on `threads` threads for about `seconds`.
    static func scryptVerificationsPerSecond(parameters: ScryptParameters, threads: Int, seconds: Double) throws -> Double {
        precondition(threads >= 1 && seconds > 0)
        let hash = try PasswordHasher.hash("benchmark password", parameters: parameters)
        let verified = Tally()
        let deadline = Date().addingTimeInterval(seconds)
        let group = DispatchGroup()
        let start = Date()
        for _ in 0..<threads {
            group.enter()
            _ = JoinableThread(name: "scrypt-bench") {
                while Date() < deadline {
                    _ = PasswordHasher.verify("benchmark password", against: hash)
                    verified.add()
                }
                group.leave()
            }
        }
        group.wait()
        return Double(verified.count) / Date().timeIntervalSince(start)
    }

    /// Registers a fresh user for benchmarking through `gateway`; returns its username and password.
    static func registerUser(gateway: Endpoint) throws -> (username: String, password: String) {
        let username = "bench" + Base64URL.encode(SecureRandom.bytes(6)).lowercased().filter { $0.isLetter || $0.isNumber }
        let password = "bench passphrase " + Base64URL.encode(SecureRandom.bytes(9))
        let setup = try LineClient(gateway)
        _ = try setup.result("identity.register", [
            "username": .string(username), "password": .string(password), "email": .string("\(username)@example.com"), "phone": "5555550100",
        ])
        return (username, password)
    }

    /// A count shared by the measuring threads.
    final class Tally: @unchecked Sendable {
        private let lock = Lock()
        private var value = 0

        func add() {
            lock.lock()
            value += 1
            lock.unlock()
        }

        var count: Int {
            lock.lock()
            defer { lock.unlock() }
            return value
        }
    }
}
