import Contract
import LineProtocol
@testable import RPC
@testable import Runtime
import TestSupport
import XCTest

final class ParamsTests: XCTestCase {
    func testMissingAndWrongTypesNameTheFieldButNeverTheValue() throws {
        let params = try Params(["password": 12345, "name": "hunter2-secret"])
        XCTAssertThrowsError(try params.string("password")) { error in
            let rpc = error as! RPCError
            XCTAssertEqual(rpc.reason, .invalidParams)
            XCTAssertEqual(rpc.data?["field"]?.stringValue, "password")
            XCTAssertFalse(rpc.message.contains("12345"))
        }
        XCTAssertThrowsError(try params.int("name")) { error in
            XCTAssertFalse((error as! RPCError).message.contains("hunter2"))
        }
        XCTAssertThrowsError(try params.string("absent"))
        XCTAssertNil(try params.optionalString("absent"))
    }

    func testLimitsLengthAndIntegerRange() throws {
        let params = try Params(["name": .string(String(repeating: "a", count: 20)), "amount": 0])
        XCTAssertThrowsError(try params.string("name", maxLength: 10))
        XCTAssertThrowsError(try params.int("amount", range: 1...100))
    }

    func testPositionalParamsAreRefused() {
        XCTAssertThrowsError(try Params(.array([1, 2])))
        XCTAssertNoThrow(try Params(nil))
    }
}

final class PageCursorTests: XCTestCase {
    private let key = [UInt8](repeating: 7, count: 32)

    func testACursorNamesItsPositionToItsOwnerAndMethodOnly() throws {
        let history = PageCursor(key: key, method: "accounts.history")
        let cursor = history.next(after: 56, owner: "usr_a")
        XCTAssertEqual(try history.position(cursor, owner: "usr_a"), 56)
        XCTAssertNil(try history.position(nil, owner: "usr_a"))
        let refusals: [(PageCursor, String)] = [
            (history, "usr_b"), (PageCursor(key: key, method: "identity.activity"), "usr_a"),
            (PageCursor(key: [UInt8](repeating: 8, count: 32), method: "accounts.history"), "usr_a"),
        ]
        for (reader, owner) in refusals {
            XCTAssertThrowsError(try reader.position(cursor, owner: owner)) { error in
                XCTAssertEqual((error as? RPCError)?.data?["field"], "before")
            }
        }
    }

    func testBeforeIsAStringOfACursorsLengthOrRefusedOnBefore() throws {
        let cursor = PageCursor(key: key, method: "m").next(after: 9, owner: "u")
        XCTAssertEqual(try PageCursor.before(Params(members: ["before": .string(cursor)])), cursor)
        XCTAssertNil(try PageCursor.before(Params(members: [:])))
        XCTAssertNil(try PageCursor.before(Params(members: ["before": .null])))
        for bad: JSON in [56, "", "9", .string(cursor + "A"), .string(String(cursor.dropLast())), .array([.string(cursor)])] {
            XCTAssertThrowsError(try PageCursor.before(Params(members: ["before": bad])), "\(bad)") { error in
                XCTAssertEqual((error as? RPCError)?.data?["field"], "before")
            }
        }
    }
}

private struct DomainFailure: RPCErrorConvertible {
    var rpcError: RPCError { RPCError(.notFound, "no such thing") }
}

private struct SecretBearingFailure: Error {}

final class RouterTests: XCTestCase {
    private var pool: WorkerPool!

    override func setUp() { pool = WorkerPool(threadCount: 1, maxQueued: 4) }
    override func tearDown() { pool.shutdownAndJoin() }

    private func call(_ router: Router, _ method: String, _ params: JSON? = nil) -> Result<JSON, RPCError> {
        let box = ResultBox<Result<JSON, RPCError>>()
        let context = CallContext(method: method, requestID: "t", client: nil, logger: Logger(service: "t", sink: LogSink()), deadlineMilliseconds: .max)
        router.dispatch(RPCRequest(method: method, params: params, id: 1), context: context) { box.set($0) }
        return box.wait()
    }

    func testUnknownMethodIsMethodNotFound() {
        let router = Router(workers: pool, metrics: Metrics())
        guard case .failure(let error) = call(router, "nope.nothing") else { return XCTFail("expected an error") }
        XCTAssertEqual(error.code, -32601)
    }

    func testDomainErrorsMapAndUnknownErrorsBecomeBareInternal() {
        let router = Router(workers: pool, metrics: Metrics())
        router.register("t.domain") { _, _ in throw DomainFailure() }
        router.register("t.crash") { _, _ in throw SecretBearingFailure() }
        guard case .failure(let domain) = call(router, "t.domain") else { return XCTFail() }
        XCTAssertEqual(domain.reason, .notFound)
        guard case .failure(let crash) = call(router, "t.crash") else { return XCTFail() }
        XCTAssertEqual(crash.code, -32603)
        XCTAssertEqual(crash.message, "internal error")
    }

    private static let declared = MethodContract(
        "t.lookup", .internal, retry: .safe, summary: "a test method", params: [Fields.userID], result: [Fields.ok], errors: [.notFound])

    func testADeclaredMethodRefusesWhatItDoesNotTakeBeforeItsHandlerRuns() {
        let router = Router(workers: pool, metrics: Metrics())
        let ran = Counter()
        router.register(Self.declared) { _, _ in
            ran.add()
            return ["ok": true]
        }
        guard case .failure(let unknown) = call(router, "t.lookup", ["user_id": "u", "admin": true]) else { return XCTFail() }
        XCTAssertEqual(unknown.data?["field"], "admin")
        guard case .failure(let shape) = call(router, "t.lookup", ["user_id": 5]) else { return XCTFail() }
        XCTAssertEqual(shape.message, "user_id must be a string")
        XCTAssertEqual(ran.value, 0)
        XCTAssertEqual(try call(router, "t.lookup", ["user_id": "u"]).get(), ["ok": true])
        XCTAssertEqual(ran.value, 1)
    }

    func testInDebugBuildsAnAnswerOutsideTheDeclarationIsInternal() throws {
        #if DEBUG
        let router = Router(workers: pool, metrics: Metrics())
        router.register(Self.declared) { params, _ in
            switch try params.string("user_id") {
            case "extra": return ["ok": true, "password_hash": "x"]
            case "missing": return [:]
            case "conflict": throw RPCError(.conflict, "not declared")
            default: throw RPCError(.notFound, "declared")
            }
        }
        for (userID, drift) in [("extra", "password_hash"), ("missing", "ok"), ("conflict", "conflict")] {
            guard case .failure(let error) = call(router, "t.lookup", ["user_id": .string(userID)]) else { return XCTFail(userID) }
            XCTAssertEqual(error.reason, .`internal`, userID)
            XCTAssertTrue(error.message.contains("contract drift") && error.message.contains(drift), error.message)
        }
        guard case .failure(let declared) = call(router, "t.lookup", ["user_id": "other"]) else { return XCTFail() }
        XCTAssertEqual(declared.reason, .notFound)
        #else
        throw XCTSkip("answers are held to the contract in debug builds")
        #endif
    }

    func testMetricsCountCallsAndErrorsPerMethod() {
        let metrics = Metrics()
        let router = Router(workers: pool, metrics: metrics)
        router.register("t.ok", execution: .inline) { _, _ in 1 }
        router.register("t.bad") { _, _ in throw DomainFailure() }
        _ = call(router, "t.ok")
        _ = call(router, "t.ok")
        _ = call(router, "t.bad")
        let snapshot = metrics.snapshot()
        XCTAssertEqual(snapshot["methods"]?["t.ok"]?["count"], 2)
        XCTAssertEqual(snapshot["methods"]?["t.bad"]?["errors"]?["not_found"], 1)
    }
}
