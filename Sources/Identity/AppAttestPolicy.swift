import FoundationEssentials
import Secrets
import ServiceKit
import WebAuthn

/// App Attest as identity applies it: which apps' keys it believes, and whether a device key
/// must be vouched for by one to reach aal 2 or to confirm money (`--require-app-attest`).
public struct AppAttestSettings: Sendable {
    /// Nil: App Attest is not configured; an enrolment that carries an attestation is refused.
    public var policy: AppAttest.Policy?
    public var required = false

    public init(policy: AppAttest.Policy? = nil, required: Bool = false) {
        self.policy = policy
        self.required = required
    }
}

extension IdentityOptions {
    public static let appAttestAppIDs = ConfigOption(
        "app-attest-app-ids", help: "App IDs (TEAMID.bundle.id, comma-separated) whose App Attest keys may vouch for device keys (unset: App Attest off)")
    public static let appAttestEnvironment = ConfigOption(
        "app-attest-environment", default: "production", help: "the App Attest environment accepted: production, or development for builds run from Xcode")
    public static let appAttestRoot = ConfigOption(
        "app-attest-root", help: "Apple's App Attestation Root CA as a PEM file (from apple.com/certificateauthority); needed with --app-attest-app-ids")
    public static let requireAppAttest = ConfigOption(
        "require-app-attest", default: "false",
        help: "device keys reach aal 2 and confirm money only when an App Attest key vouched for them and signs each use")

    static let appAttestOptions = [appAttestAppIDs, appAttestEnvironment, appAttestRoot, requireAppAttest]

    static func appAttestSettings(_ configuration: Configuration) throws -> AppAttestSettings {
        let appIDs = HTTPOptions.list(configuration, appAttestAppIDs)
        let required = try configuration.bool(requireAppAttest)
        guard !appIDs.isEmpty else {
            if required { throw ConfigurationError("\(requireAppAttest.flag) needs \(appAttestAppIDs.flag) and \(appAttestRoot.flag)") }
            return AppAttestSettings()
        }
        for appID in appIDs where !isAppID(appID) {
            throw ConfigurationError("\(appAttestAppIDs.flag): \(appID) is not TEAMID.bundle.id (a 10-character team id, a dot, a bundle id)")
        }
        guard let environment = AppAttest.Environment(rawValue: try configuration.requiredString(appAttestEnvironment)) else {
            throw ConfigurationError("\(appAttestEnvironment.flag) must be production or development")
        }
        let path = try configuration.requiredString(appAttestRoot)
        guard let pem = try? String(contentsOfFile: path, encoding: .utf8), let root = try? X509Certificate(pem: pem) else {
            throw ConfigurationError("\(appAttestRoot.flag): \(path) is not a readable PEM certificate")
        }
        return AppAttestSettings(policy: AppAttest.Policy(appIDs: appIDs, environment: environment, roots: [root]), required: required)
    }

    private static func isAppID(_ text: String) -> Bool {
        let parts = text.split(separator: ".", maxSplits: 1)
        guard parts.count == 2, parts[0].count == 10, parts[0].allSatisfy({ $0.isASCII && ($0.isUppercase || $0.isNumber) }) else { return false }
        return !parts[1].isEmpty && parts[1].utf8.count <= 155 && parts[1].allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-.".contains($0)) }
    }
}
