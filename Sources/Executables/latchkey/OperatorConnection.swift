import LineProtocol
import Platform
import RPC
import ServiceKit

/// How the operator commands reach the services: straight to identity and accounts (their
/// internal methods, which the gateway never forwards), at the addresses the services
/// themselves use (`--identity` / `LATCHKEY_IDENTITY`, `--accounts` / `LATCHKEY_ACCOUNTS`, or
/// both from `--base-port` / `LATCHKEY_BASE_PORT`),
/// with the service token in `meta` when one is set (`--service-token` / `LATCHKEY_SERVICE_TOKEN`).
struct OperatorConnection {
    static let options = [CommonOptions.identity, CommonOptions.accounts, CommonOptions.serviceToken, BasePort.option]

    let identity: [Endpoint]
    let accounts: [Endpoint]
    let serviceToken: String?

    init(_ configuration: Configuration) throws(ConfigurationError) {
        identity = try Self.endpoints(of: "identity", configuration, CommonOptions.identity)
        accounts = try Self.endpoints(of: "accounts", configuration, CommonOptions.accounts)
        serviceToken = configuration.string(CommonOptions.serviceToken).flatMap { $0.isEmpty ? nil : $0 }
    }

    private static func endpoints(of service: String, _ configuration: Configuration, _ option: ConfigOption) throws(ConfigurationError) -> [Endpoint] {
        guard let endpoints = Endpoint.list(try BasePort.address(of: service, configuration, addressOption: option)) else {
            throw ConfigurationError("\(option.flag) must be a comma-separated list of HOST:PORT")
        }
        return endpoints
    }

    /// Calls `method` on the first replica of its service that accepts a connection and returns
    /// the result; an error answer is thrown as `OperatorErrorAnswer` (exit 1), no replica at
    /// all as `ServiceUnreachable` (exit 3).
    func result(_ method: String, _ params: JSON) throws -> JSON {
        let service = String(method.prefix { $0 != "." })
        let endpoints = service == "accounts" ? accounts : identity
        let client = try connect(service, endpoints)
        let meta = serviceToken.map { RequestMeta(token: $0) }
        try client.send(RPCRequest(method: method, params: params, id: 1, meta: meta).encoded())
        guard let line = try client.readLine(),
              let response = RPCResponse.decode(try JSONParser.parse(line, limits: JSONLimits(maxDepth: 64, maxBytes: 16 << 20, maxStringBytes: 16 << 20)))
        else { throw UnreadableAnswer(endpoint: client.endpoint, method: method) }
        switch response.outcome {
        case .success(let result): return result
        case .failure(let error): throw OperatorErrorAnswer(service: service, method: method, error: error, tokenSet: serviceToken != nil)
        }
    }

    /// The user behind a username (`identity.find_by_username`).
    func userID(of username: String) throws -> String {
        let method = "identity.find_by_username"
        guard let userID = try result(method, ["username": .string(username)])["user_id"]?.stringValue else {
            throw UnreadableAnswer(endpoint: identity[0], method: method)
        }
        return userID
    }

    private func connect(_ service: String, _ endpoints: [Endpoint]) throws -> LineClient {
        var refusals: [SystemError] = []
        for endpoint in endpoints {
            do {
                return try LineClient(endpoint)
            } catch let error as SystemError where [ECONNREFUSED, ENOENT, EHOSTUNREACH, ETIMEDOUT].contains(error.errno) {
                refusals.append(error)
            }
        }
        throw ServiceUnreachable(service: service, endpoints: endpoints, reasons: refusals)
    }
}

/// The connection closed before the answer, or the answer was not JSON-RPC (exit 1).
struct UnreadableAnswer: Error, CustomStringConvertible {
    let endpoint: Endpoint
    let method: String

    var description: String { "\(method): no readable answer from \(endpoint)" }
}

/// No replica of a service accepted a connection (exit 3).
struct ServiceUnreachable: Error, CustomStringConvertible {
    let service: String
    let endpoints: [Endpoint]
    let reasons: [SystemError]

    var description: String {
        let tried = endpoints.map(\.description).joined(separator: ", ")
        return "no \(service) at \(tried) (\(reasons.last.map { "\($0)" } ?? "refused")): is the stack running? try `latchkey up`, or name the address with --\(service)"
    }
}

/// A service answered with an error (exit 1). Says what to do when the service token is missing
/// or wrong; never shows the token.
struct OperatorErrorAnswer: Error, CustomStringConvertible {
    let service: String
    let method: String
    let error: RPCError
    let tokenSet: Bool

    var description: String {
        var text = "\(method): \(error.message) (\(error.reasonText ?? "code \(error.code)"))"
        if error.reason == .unauthenticated {
            text += tokenSet
                ? "; the service token given differs from the stack's (LATCHKEY_SERVICE_TOKEN)"
                : "; this \(service) requires the stack's service token: set LATCHKEY_SERVICE_TOKEN or --service-token"
        }
        return text
    }
}
