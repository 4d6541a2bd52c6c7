import Foundation
import LineProtocol
import Secrets
import ServiceKit
import Storage

/// Benches of whole flows, each next to its ceiling measured in the same run.
enum LoginBench {
    static func run(_ environment: BenchEnvironment, report: BenchReport) throws {
        throw ConfigurationError("login bench lands with the identity service")
    }
}

enum VerifyBench {
    static func run(_ environment: BenchEnvironment, report: BenchReport) throws {
        throw ConfigurationError("verify bench lands with the verification service")
    }
}

enum TransferBench {
    static func run(_ environment: BenchEnvironment, report: BenchReport) throws {
        throw ConfigurationError("transfer bench lands with the accounts service")
    }
}

enum ResetBench {
    static func run(_ environment: BenchEnvironment, report: BenchReport) throws {
        throw ConfigurationError("reset bench lands with the reset service")
    }
}
