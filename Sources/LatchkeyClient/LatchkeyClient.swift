import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The Latchkey client an app holds: typed calls to the gateway's HTTP door and the seed app's
/// flows on top of them (sign in, second factors, balances, transfers, password reset). It
/// keeps the signed-in session in its `SessionStore` and sends it with every call that needs it.
///
/// Errors from the server and the network are `LatchkeyError`; errors of the app's own
/// `SessionStore` or `DeviceKeySigner` (a cancelled Face ID prompt) pass through unchanged.
public final class LatchkeyClient: Sendable {
    /// The HTTP door (`http://127.0.0.1:7480` in development; HTTPS in production).
    public let baseURL: URL
    public let store: any SessionStore
    let transport: HTTPTransport

    public init(
        baseURL: URL, session: URLSession = .shared, store: any SessionStore = InMemorySessionStore(),
        retryPolicy: RetryPolicy = .standard
    ) {
        self.baseURL = baseURL
        self.store = store
        transport = HTTPTransport(baseURL: baseURL, session: session, retryPolicy: retryPolicy)
    }

    /// Whether a session is stored (it may still have expired on the server).
    public var isSignedIn: Bool { (try? store.loadSession()) != nil }

    /// Any public method, typed. Sends the stored session when the method takes one; drops it
    /// from the store when the server answers `unauthenticated` to it.
    public func send<Request: LatchkeyRequest>(_ request: Request) async throws -> Request.Response {
        let stored = try sessionToSend(for: request)
        do {
            return try await transport.send(request, token: stored?.token)
        } catch .unauthenticated {
            if let stored, try store.loadSession()?.token == stored.token { try store.saveSession(nil) }
            throw LatchkeyError.unauthenticated
        }
    }

    private func sessionToSend<Request: LatchkeyRequest>(for request: Request) throws -> StoredSession? {
        let needed: Bool
        switch Request.session {
        case .none: needed = false
        case .required: needed = true
        case .optional: needed = (request as? any OptionalSessionRequest)?.sendsSession ?? false
        }
        guard needed else { return nil }
        guard let stored = try store.loadSession() else { throw LatchkeyError.notSignedIn }
        return stored
    }
}
