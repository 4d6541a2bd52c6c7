import Foundation
import LineProtocol
import XCTest

/// Memory: a process maps only the libraries its mode uses. libpq, and what
/// it pulls in (GnuTLS, Kerberos, LDAP, SASL: about 3 MB resident in every process), is loaded
/// when a service is given a PostgreSQL URL, never in the default SQLite mode.
final class SharedLibrariesEndToEndTests: StackTestCase {
    func testSQLiteModeProcessesNeverMapLibpq() throws {
        // Each service has served a request, so whatever it loads on first use is loaded by now.
        for service in ["identity", "verification", "accounts", "reset"] {
            XCTAssertEqual(try direct(service).result("\(service).ping")["pong"], .bool(true), service)
        }
        XCTAssertEqual(try gateway().result("gateway.ping")["pong"], .bool(true))
        for member in stack.members {
            let maps = readTextFile("/proc/\(member.process.processIdentifier)/maps")
            XCTAssertFalse(maps.isEmpty, "\(member.replicaID) is running and its maps are readable")
            let libpq = maps.split(separator: "\n").filter { $0.contains("libpq.so") }
            XCTAssertEqual(libpq, [], "\(member.replicaID) maps libpq in SQLite mode")
        }
    }

    /// The first use of OpenSSL's algorithms (fetching HMAC, a digest, its random generator) sets
    /// up its default provider, which keeps about 2 MB more of libcrypto resident: a service must
    /// not pay that at rest, only on the first request that needs it. Each service is held to the
    /// gateway, which does no cryptography until a session arrives, in the same stack.
    func testServicesAtRestHaveDoneNoOpenSSLWorkTheGatewayHasNot() throws {
        for service in ["identity", "verification", "accounts", "reset"] {
            XCTAssertEqual(try direct(service).result("\(service).ping")["pong"], .bool(true), service)
        }
        XCTAssertEqual(try gateway().result("gateway.ping")["pong"], .bool(true))
        let resident = Dictionary(uniqueKeysWithValues: stack.members.map { member in
            (member.service, residentKilobytes(of: "libcrypto.so", in: member.process.processIdentifier))
        })
        let atRest = try XCTUnwrap(resident["gateway"])
        XCTAssertGreaterThan(atRest, 0, "the gateway maps libcrypto and its smaps are readable")
        for service in ["identity", "verification", "accounts", "reset"] {
            let kilobytes = try XCTUnwrap(resident[service], service)
            XCTAssertLessThanOrEqual(kilobytes, atRest + 512, "\(service) keeps \(kilobytes) kB of libcrypto resident at rest, the gateway \(atRest) kB")
        }
    }

    /// The resident kilobytes of every mapping of `library` in process `pid` (`/proc/PID/smaps`).
    private func residentKilobytes(of library: String, in pid: Int32) -> Int {
        var inLibrary = false
        var total = 0
        for line in readTextFile("/proc/\(pid)/smaps").split(separator: "\n") {
            if let first = line.first, first.isHexDigit, line.contains("-") {
                inLibrary = line.contains(library)
            } else if inLibrary, line.hasPrefix("Rss:") {
                total += Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? 0
            }
        }
        return total
    }
}
