import Contract
import Foundation
import RPC
import LineProtocol
import StackLauncher
import XCTest

/// protocol/methods.json against the running stack: every public method, called through the
/// gateway with a settled, recently stepped-up session, takes exactly the parameters the table
/// documents. An undocumented name is refused naming it (and `data.accepted` is the documented
/// list); each documented required name, left out, is refused naming it.
final class DocumentedParamsEndToEndTests: StackTestCase {
    override func stackOptions(_ options: inout Stack.Options) {
        // About a hundred calls from one address: the gateway's buckets are not under test here.
        options.serviceEnvironment["gateway"] = ["LATCHKEY_RATE_LIMITS": "auth=0:1,codes=0:1,reset=0:1,default=0:1,observe=0:1"]
    }

    private func publicMethods() throws -> [String: JSON] {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("protocol/methods.json").path
        let bytes = try XCTUnwrap(FileManager.default.contents(atPath: path), path)
        let document = try JSONParser.parse([UInt8](bytes), limits: JSONLimits(maxDepth: 16, maxBytes: 1 << 20, maxStringBytes: 1 << 20))
        return try XCTUnwrap(document["public"]?.objectValue)
    }

    private func names(_ method: JSON, _ kind: String) -> [String] {
        (method["params"]?[kind]?.arrayValue ?? []).compactMap(\.stringValue)
    }

    func testEveryPublicMethodTakesExactlyItsDocumentedParameters() throws {
        let client = try gateway()
        _ = try client.result("identity.register", [
            "username": "dora", "password": "correct horse battery", "email": "dora@example.com", "phone": "+15555550177",
        ])
        let session = try XCTUnwrap(try client.result("identity.login", [
            "username": "dora", "password": "correct horse battery", "device_id": "iphone-1",
        ])["session"])
        try passLoginFactor(client, session: session)

        let methods = try publicMethods()
        XCTAssertGreaterThan(methods.count, 20)
        for (name, method) in methods.sorted(by: { $0.key < $1.key }) {
            let required = names(method, "required")
            let documented = required + names(method, "optional")
            var params: [String: JSON] = [:]
            // Values do not matter: names are checked before any value is read.
            for parameter in documented { params[parameter] = parameter == "session" ? session : "x" }

            var withUnknown = params
            withUnknown["zz_undocumented"] = true
            let refusal = try client.call(name, .object(withUnknown))
            if let error = assertError(refusal, "invalid_params") {
                XCTAssertEqual(error.data?["field"], "zz_undocumented", "\(name): \(error.message)")
                XCTAssertEqual(error.data?["accepted"], .array(documented.sorted().map(JSON.string)), "\(name) takes what methods.json says")
            }
            for parameter in required where parameter != "session" {
                var without = params
                without[parameter] = nil
                let missing = try client.call(name, .object(without))
                XCTAssertEqual(assertError(missing, "invalid_params")?.data?["field"]?.stringValue, parameter, "\(name) requires \(parameter)")
            }
            if required.contains("session") {
                var without = params
                without["session"] = nil
                assertError(try client.call(name, .object(without)), "unauthenticated")
            }
        }
    }

    /// Every method each service serves, internal and operator ones too, refuses a parameter it
    /// does not take, on the service's own listener: none ignores a misspelt name.
    func testEveryServiceMethodRefusesAParameterItDoesNotTake() throws {
        for service in Contract.services {
            let client = try LineClient(stack.endpoint(service), timeoutMilliseconds: 10_000)
            for method in Contract.methods where method.service == service {
                for withSession in method.internalForm == nil ? [false] : [false, true] {
                    var params: [String: JSON] = ["zz_undocumented": true]
                    if withSession { params["session"] = "lks_not_a_session" }
                    let refusal = try client.call(method.name, .object(params))
                    let error = assertError(refusal, "invalid_params")
                    XCTAssertEqual(error?.data?["field"], "zz_undocumented", "\(method.name): \(error?.message ?? "answered")")
                    let form = method.form(withSession: withSession)
                    XCTAssertEqual(error?.data?["accepted"], .array(form.acceptedNames.map(JSON.string)), method.name)
                }
            }
        }
    }

    /// It once showed the phone number and the user id to a password-only session.
    func testVerificationStatusIsNotReachableFromOutside() throws {
        assertError(try gateway().call("verification.status", ["request_id": "vr_verification_x"]), "method_not_found")
    }
}
