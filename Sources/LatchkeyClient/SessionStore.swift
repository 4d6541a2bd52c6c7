import Foundation

/// What the client keeps between calls and launches: the session of the signed-in user, and
/// the device token each password login answers (sent with the next login from this device,
/// it keeps guessers elsewhere from locking the owner's own phone out).
/// An app backs this with the Keychain (`kSecClassGenericPassword`,
/// `kSecAttrAccessibleWhenUnlockedThisDeviceOnly`); see the README.
public protocol SessionStore: Sendable {
    func loadSession() throws -> StoredSession?
    /// nil removes it (sign-out, or the server ended the session).
    func saveSession(_ session: StoredSession?) throws
    func loadDeviceToken(username: String, deviceID: String) throws -> String?
    func saveDeviceToken(_ token: String?, username: String, deviceID: String) throws
}

/// The signed-in session. `token` is a bearer secret (`lks_...`): keep it in the Keychain, never in logs.
public struct StoredSession: Codable, Sendable, Equatable {
    public let token: String
    public let sessionID: String?
    public let username: String
    public let deviceID: String

    public init(token: String, sessionID: String?, username: String, deviceID: String) {
        (self.token, self.sessionID, self.username, self.deviceID) = (token, sessionID, username, deviceID)
    }
}

/// A bearer token must not reach an app's logs or a crash report: printing, `dump` and the
/// debugger show the session without it.
extension StoredSession: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String {
        "StoredSession(token: <redacted>, sessionID: \(sessionID ?? "nil"), username: \(username), deviceID: \(deviceID))"
    }
    public var debugDescription: String { description }
    public var customMirror: Mirror {
        Mirror(self, children: ["token": "<redacted>", "sessionID": sessionID as Any, "username": username, "deviceID": deviceID])
    }
}

/// Keeps everything in memory: the session ends with the process. The default, and for tests.
public final class InMemorySessionStore: SessionStore, @unchecked Sendable {
    // Guarded by `lock`.
    private var session: StoredSession?
    private var deviceTokens: [String: String] = [:]
    private let lock = NSLock()

    public init() {}

    public func loadSession() -> StoredSession? { locked { session } }

    public func saveSession(_ session: StoredSession?) { locked { self.session = session } }

    public func loadDeviceToken(username: String, deviceID: String) -> String? {
        locked { deviceTokens[Self.key(username, deviceID)] }
    }

    public func saveDeviceToken(_ token: String?, username: String, deviceID: String) {
        locked { deviceTokens[Self.key(username, deviceID)] = token }
    }

    /// `NSLock.withLock` needs iOS 16 / macOS 13; the client supports iOS 15 / macOS 12.
    private func locked<T>(_ body: () -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body()
    }

    private static func key(_ username: String, _ deviceID: String) -> String { "\(username.lowercased())\u{0}\(deviceID)" }
}
