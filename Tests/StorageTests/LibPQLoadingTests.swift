import CPostgres
import XCTest

@testable import Storage

/// libpq is found at run time (SQLite-mode processes never map it). A host without it
/// gets an error that names the library and its package, not a crash; with it, every function
/// the PostgreSQL backend calls is found.
final class LibPQLoadingTests: XCTestCase {
    func testAMissingLibraryIsAnUnavailableErrorNamingIt() {
        XCTAssertThrowsError(try LibPQ(library: "libpq-not-installed.so.5")) { error in
            guard case .unavailable(let message) = error as? StorageError else { return XCTFail("\(error)") }
            XCTAssertTrue(message.contains("libpq-not-installed.so.5"), message)
            XCTAssertTrue(message.contains("libpq5"), message)
        }
    }

    func testTheInstalledLibraryLoadsWithEveryFunction() throws {
        let pq = try LibPQ.shared()
        // A connection that cannot succeed still runs through libpq: status, message, finish.
        let keywords = ["host", "port", "connect_timeout"]
        let values = ["/nonexistent-socket-directory", "1", "1"]
        let connection = withStrings(keywords) { keys in withStrings(values) { vals in pq.connectdbParams(keys, vals, 0) } }
        XCTAssertNotNil(connection)
        XCTAssertNotEqual(pq.status(connection), CONNECTION_OK)
        XCTAssertFalse(String(cString: pq.errorMessage(connection)!).isEmpty)
        pq.finish(connection)
    }

    private func withStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R) -> R {
        let copies = strings.map { strdup($0) }
        defer { copies.forEach { free($0) } }
        let pointers = copies.map { UnsafePointer($0) } + [nil]
        return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
    }
}
