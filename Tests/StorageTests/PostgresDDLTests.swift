import XCTest

@testable import Storage

final class PostgresDDLTests: XCTestCase {
    func testTypesBecomePostgreSQLsAndOnlyWholeWords() {
        XCTAssertEqual(
            PostgresDDL.translate("CREATE TABLE t (id INTEGER PRIMARY KEY, n INTEGER NOT NULL, r REAL, b BLOB, integers_seen TEXT) WITHOUT ROWID;"),
            "CREATE TABLE t (id BIGSERIAL PRIMARY KEY, n BIGINT NOT NULL, r DOUBLE PRECISION, b BYTEA, integers_seen TEXT);")
    }
}
