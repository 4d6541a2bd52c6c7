import FoundationEssentials
import LineProtocol
import Secrets
import ServiceKit
import WebAuthn

/// `latchkey app-attest-check --root FILE`: identity's App Attest verifier on its own, one case
/// per line on stdin, one answer per line on stdout: for an operator checking an app build's
/// attestation before turning `--require-app-attest` on, and for the interop suite that holds
/// the verifier to a real iPhone's attestation.
///
///   {"attestation": b64, "key_id": b64, "client_data_hash": b64, "app_ids": ["TEAM.bundle"], "environment": "development", "now": unix}
///   {"assertion": b64, "client_data": b64, "public_key": b64 (X9.63), "app_id": "TEAM.bundle", "counter": n}
///
/// Answers `{"ok": true, ...}` or `{"ok": false, "reason": ..., "message": ...}`; base64 is
/// standard or url-safe.
enum AppAttestCheckCommand {
    static let root = ConfigOption("root", help: "app-attest-check: Apple's App Attestation Root CA, PEM (required)")

    static func run(arguments: [String], environment: [String: String]) throws -> Int32 {
        let configuration = try Configuration(arguments: arguments, environment: environment, options: [root])
        let path = try configuration.requiredString(root)
        guard let pem = try? String(contentsOfFile: path, encoding: .utf8), let anchor = try? X509Certificate(pem: pem) else {
            throw ConfigurationError("\(root.flag): \(path) is not a PEM certificate")
        }
        while let line = readLine() {
            guard !line.isEmpty else { continue }
            print(answer(line, roots: [anchor]).text)
        }
        return 0
    }

    static func answer(_ line: String, roots: [X509Certificate]) -> JSON {
        guard let request = try? JSONParser.parse(line), request.objectValue != nil else { return refusal("malformed", "the line is not a JSON object") }
        do {
            if let attestation = bytes(request["attestation"]) {
                guard let keyID = bytes(request["key_id"]), let hash = bytes(request["client_data_hash"]),
                    let environmentName = request["environment"]?.stringValue, let environment = AppAttest.Environment(rawValue: environmentName),
                    let now = request["now"]?.intValue
                else { return refusal("malformed", "an attestation case needs key_id, client_data_hash, app_ids, environment and now") }
                let appIDs = request["app_ids"]?.arrayValue?.compactMap(\.stringValue) ?? []
                let key = try AppAttest.verifyAttestation(
                    attestation, keyID: keyID, clientDataHash: hash, policy: AppAttest.Policy(appIDs: appIDs, environment: environment, roots: roots),
                    now: now)
                return ["ok": true, "app_id": .string(key.appID), "public_key": .string(Base64.encode(key.publicKey))]
            }
            guard let assertion = bytes(request["assertion"]), let clientData = bytes(request["client_data"]),
                let publicKey = bytes(request["public_key"]), let appID = request["app_id"]?.stringValue,
                let counter = request["counter"]?.intValue, let stored = UInt32(exactly: counter)
            else { return refusal("malformed", "an assertion case needs client_data, public_key, app_id and counter") }
            let key = AppAttest.AttestedKey(keyID: SHA256.hash(publicKey), publicKey: publicKey, appID: appID, environment: .development, receipt: [])
            let next = try AppAttest.verifyAssertion(assertion, clientData: clientData, key: key, storedCounter: stored)
            return ["ok": true, "counter": .int(Int64(next))]
        } catch {
            return refusal(error.reason.rawValue, error.message)
        }
    }

    private static func refusal(_ reason: String, _ message: String) -> JSON { ["ok": false, "reason": .string(reason), "message": .string(message)] }

    /// Standard or url-safe base64 (`Base64URL.decode` takes either).
    private static func bytes(_ value: JSON?) -> [UInt8]? { value?.stringValue.flatMap(Base64URL.decode) }
}
