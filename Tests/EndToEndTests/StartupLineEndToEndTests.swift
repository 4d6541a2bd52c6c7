import Foundation
import LineProtocol
import XCTest

/// A newcomer reading a log must learn from its first line what the process runs on: its event
/// backend, loops, workers, storage and version, as configured, before anything else it says.
final class StartupLineEndToEndTests: XCTestCase {
    private var directory: String!
    private var launched: [LaunchedProcess] = []

    override func setUpWithError() throws { directory = try makeScratchDirectory("startup-line") }

    override func tearDown() {
        for process in launched.reversed() { process.stop() }
        launched = []
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func firstLine(_ executable: String, _ arguments: [String]) throws -> JSON {
        let process = try LaunchedProcess(executable, name: executable, arguments: arguments, directory: directory)
        launched.append(process)
        let line = try XCTUnwrap(process.log.split(separator: "\n").first.map(String.init), process.log)
        return try JSONParser.parse(line)
    }

    func testEveryProcessFirstNamesWhatItRunsOn() throws {
        let identity = try firstLine("identity", ["--event-backend", "poll", "--event-loops", "2", "--workers", "3"])
        XCTAssertEqual(identity["msg"]?.stringValue, "starting", "\(identity)")
        XCTAssertEqual(identity["event.backend"]?.stringValue, "poll")
        XCTAssertEqual(identity["net.event_loops"], .int(2))
        XCTAssertEqual(identity["workers"], .int(3))
        XCTAssertEqual(identity["db.backend"]?.stringValue, "sqlite")
        XCTAssertFalse(identity["version"]?.stringValue?.isEmpty ?? true, "\(identity)")

        let gateway = try firstLine("gateway", [
            "--identity", "127.0.0.1:1", "--verification", "127.0.0.1:1", "--accounts", "127.0.0.1:1", "--reset", "127.0.0.1:1",
            "--http-listen", "off", "--event-backend", "epoll", "--event-loops", "1", "--workers", "5",
        ])
        XCTAssertEqual(gateway["msg"]?.stringValue, "starting", "\(gateway)")
        XCTAssertEqual(gateway["event.backend"]?.stringValue, "epoll")
        XCTAssertEqual(gateway["net.event_loops"], .int(1))
        XCTAssertEqual(gateway["workers"], .int(5))
        XCTAssertEqual(gateway["db.backend"]?.stringValue, "none", "the gateway keeps no data")
        XCTAssertEqual(gateway["version"], identity["version"])
    }
}
