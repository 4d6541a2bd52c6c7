import Foundation
import LineProtocol
import XCTest

/// Issue 19, goal 4 (memory): a process maps only the libraries its mode uses. libpq, and what
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
}
