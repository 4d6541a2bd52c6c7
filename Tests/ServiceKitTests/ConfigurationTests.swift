@testable import Platform
@testable import ServiceKit
import XCTest

final class ConfigurationTests: XCTestCase {
    let port = ConfigOption("port-number", default: "7", help: "a number")
    let nameOption = ConfigOption("name", help: "a name")

    func testFlagWinsOverEnvironmentAndEnvironmentOverDefault() throws {
        let fromEnvironment = try Configuration(arguments: [], environment: ["LATCHKEY_PORT_NUMBER": "9"], options: [port])
        XCTAssertEqual(try fromEnvironment.int(port), 9)
        let fromFlag = try Configuration(arguments: ["--port-number", "11"], environment: ["LATCHKEY_PORT_NUMBER": "9"], options: [port])
        XCTAssertEqual(try fromFlag.int(port), 11)
        let fromDefault = try Configuration(arguments: [], environment: [:], options: [port])
        XCTAssertEqual(try fromDefault.int(port), 7)
    }

    func testEqualsFormAndPositionalArguments() throws {
        let configuration = try Configuration(arguments: ["call", "--name=x y", "rest"], environment: [:], options: [nameOption])
        XCTAssertEqual(configuration.string(nameOption), "x y")
        XCTAssertEqual(configuration.positional, ["call", "rest"])
    }

    func testUnknownFlagIsRefusedNamingTheNearestKnownOne() {
        XCTAssertThrowsError(try Configuration(arguments: ["--nmae", "x"], environment: [:], options: [nameOption, port])) { error in
            XCTAssertTrue(String(describing: error).contains("unknown flag --nmae (did you mean --name?)"), String(describing: error))
        }
        XCTAssertThrowsError(try Configuration(arguments: ["--port-nubmer=3"], environment: [:], options: [nameOption, port])) { error in
            XCTAssertTrue(String(describing: error).contains("(did you mean --port-number?)"), String(describing: error))
        }
    }

    func testUsageShowsASwitchWithoutAValue() {
        let demo = ConfigOption("demo", default: "false", help: "a switch")
        let text = Usage.text("tool", options: [demo, nameOption])
        XCTAssertTrue(text.contains("  --demo  "), text)
        XCTAssertFalse(text.contains("--demo VALUE"), text)
        XCTAssertTrue(text.contains("--name VALUE"), text)
    }

    func testAFlagNeverTakesTheNextFlagAsItsValue() {
        let token = ConfigOption("service-token", help: "a secret")
        let listen = ConfigOption("listen", help: "where")
        XCTAssertThrowsError(try Configuration(arguments: ["--service-token", "--listen", "127.0.0.1:1"], environment: [:], options: [token, listen])) { error in
            XCTAssertTrue(String(describing: error).contains("--service-token needs a value"), String(describing: error))
        }
        XCTAssertThrowsError(try Configuration(arguments: ["--listen", "127.0.0.1:1", "--service-token"], environment: [:], options: [token, listen]),
                             "a value flag at the end without its value")
        let explicit = try? Configuration(arguments: ["--service-token=--odd-but-explicit"], environment: [:], options: [token])
        XCTAssertEqual(explicit?.string(token), "--odd-but-explicit", "the = form says plainly what the value is")
    }

    func testASwitchStandsAloneOrTakesABooleanWord() throws {
        let demo = ConfigOption("demo", default: "false", help: "a switch")
        let alone = try Configuration(arguments: ["--demo", "--name", "x"], environment: [:], options: [demo, nameOption])
        XCTAssertTrue(try alone.bool(demo))
        XCTAssertEqual(alone.string(nameOption), "x")
        let off = try Configuration(arguments: ["--demo", "false", "rest"], environment: [:], options: [demo])
        XCTAssertFalse(try off.bool(demo))
        XCTAssertEqual(off.positional, ["rest"])
        let beforePositional = try Configuration(arguments: ["--demo", "ping"], environment: [:], options: [demo])
        XCTAssertTrue(try beforePositional.bool(demo))
        XCTAssertEqual(beforePositional.positional, ["ping"], "a switch does not eat a positional argument")
    }

    func testAnUnknownLatchkeyVariableIsRefusedNamingTheNearestKnownOne() {
        let environment = ["LATCHKEY_SERVICE_TOKNE": "s3cret", "LATCHKEY_DATA_DIR": "/tmp", "HOME": "/root"]
        XCTAssertThrowsError(try Configuration(arguments: [], environment: environment, options: CommonOptions.all)) { error in
            let text = String(describing: error)
            XCTAssertTrue(text.contains("LATCHKEY_SERVICE_TOKNE (did you mean LATCHKEY_SERVICE_TOKEN?)"), text)
            XCTAssertFalse(text.contains("s3cret"), "values may be secrets: never echoed")
        }
        XCTAssertEqual(KnownEnvironment.nearest(to: "LATCHKEY_SCRYPT_LOGN", among: KnownEnvironment.allNames), "LATCHKEY_SCRYPT_LOG_N")
    }

    func testNamesAnyLatchkeyExecutableOrToolReadsAreAccepted() throws {
        // Another executable's option, compose's own variables, CI's, and this process's own option.
        let environment = [
            "LATCHKEY_DEMO_PASSWORD": "x", "LATCHKEY_SMTP_URL": "smtp://h", "LATCHKEY_SHARED_DATA": "/d",
            "LATCHKEY_PORT_NUMBER": "9",
        ]
        let configuration = try Configuration(arguments: [], environment: environment, options: [port])
        XCTAssertEqual(try configuration.int(port), 9)
    }

    func testIntegerOutOfRangeOrMalformedIsRefused() throws {
        let configuration = try Configuration(arguments: ["--port-number", "70000"], environment: [:], options: [port])
        XCTAssertThrowsError(try configuration.int(port, range: 0...65535))
        let words = try Configuration(arguments: ["--port-number", "seven"], environment: [:], options: [port])
        XCTAssertThrowsError(try words.int(port))
    }

    func testEndpointListsParseAndRejectGarbage() {
        XCTAssertEqual(Endpoint.list("a:1, b:2")?.map(\.description), ["a:1", "b:2"])
        XCTAssertEqual(Endpoint("[::1]:7400")?.host, "::1")
        XCTAssertNil(Endpoint.list("a:1,b"))
        XCTAssertNil(Endpoint("host:99999"))
        XCTAssertNil(Endpoint(":80"))
    }

    func testEnvironmentNamesFollowTheContract() {
        XCTAssertEqual(CommonOptions.dataDirectory.environmentName, "LATCHKEY_DATA_DIR")
        XCTAssertEqual(CommonOptions.replicaID.environmentName, "LATCHKEY_REPLICA_ID")
        XCTAssertEqual(CommonOptions.listen.flag, "--listen")
    }
}

final class ReplicaIDTests: XCTestCase {
    func testAutoReplicaIDIsTheHostNameMadeSafeForIDs() {
        let id = ServiceHost.hostReplicaID()
        XCTAssertFalse(id.isEmpty)
        XCTAssertLessThanOrEqual(id.count, 32)
        XCTAssertTrue(id.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" }, id)
    }
}
