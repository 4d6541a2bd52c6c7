import FoundationEssentials
import HTTP
import LineProtocol
import Platform
import RPC

/// The gateway's HTTP/1.1 door: maps routes onto any `RPCDispatcher` (the gateway's), so HTTP
/// and the line protocol share one code path for policy, rate limits, routing and metrics.
/// Stateless apart from its settings; safe from any thread.
public final class HTTPGatewayDoor: HTTPHandler, @unchecked Sendable {
    public struct Settings: Sendable, Equatable {
        /// `TEAMID.bundle.id` values for apple-app-site-association; empty: the file is 404.
        public var aasaAppIDs: [String] = []
        /// Universal-link paths (`/reset*`).
        public var aasaPaths: [String] = ["/reset*"]
        /// Peer addresses whose `X-Forwarded-For` is believed.
        public var trustedProxies: Set<String> = []
        /// Largest JSON-RPC batch on `POST /rpc`, as on the line protocol.
        public var maxBatchSize = 100

        public init() {}

        /// Where the browser lands when a reset link is opened without the app: the first
        /// universal-link path without its wildcard (`/reset`).
        public var resetPagePath: String {
            let path = String((aasaPaths.first ?? "/reset").prefix { $0 != "*" && $0 != "?" })
            return path.count > 1 ? path : "/reset"
        }
    }

    private let dispatcher: RPCDispatcher
    public let settings: Settings
    private let aasaBody: [UInt8]?

    public init(dispatcher: RPCDispatcher, settings: Settings = Settings()) {
        self.dispatcher = dispatcher
        self.settings = settings
        self.aasaBody = settings.aasaAppIDs.isEmpty ? nil : Self.appSiteAssociation(settings).encoded()
    }

    // MARK: Routes

    enum Route: Equatable {
        case rpc
        case method(String)
        case passwordRequest, passwordValidate, passwordReset
        case appSiteAssociation, health, resetPage, resetNewLink, stylesheet
        case linkPage(LinkPage)
    }

    /// The route for a path and the methods it allows; nil for an unknown path.
    func route(for path: String) -> (route: Route, allowed: [String])? {
        switch path {
        case "/rpc": return (.rpc, ["POST"])
        case "/auth/password/request": return (.passwordRequest, ["POST"])
        case "/auth/password/validate": return (.passwordValidate, ["POST"])
        case "/auth/password/reset": return (.passwordReset, ["POST"])
        case "/.well-known/apple-app-site-association": return (.appSiteAssociation, ["GET", "HEAD"])
        case "/healthz": return (.health, ["GET", "HEAD"])
        case settings.resetPagePath: return (.resetPage, ["GET", "HEAD", "POST"])
        case settings.resetPagePath + "/new": return (.resetNewLink, ["POST"])
        case PageHTML.stylesheetPath: return (.stylesheet, ["GET", "HEAD"])
        default: break
        }
        if let page = LinkPage(rawValue: path) { return (.linkPage(page), ["GET", "HEAD", "POST"]) }
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        guard segments.count == 4, segments[0].isEmpty, segments[1] == "v1",
            Self.isName(segments[2]), Self.isName(segments[3])
        else { return nil }
        return (.method("\(segments[2]).\(segments[3])"), ["POST"])
    }

    private static func isName(_ text: Substring) -> Bool {
        (1...64).contains(text.utf8.count) && text.utf8.allSatisfy {
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || $0 == UInt8(ascii: "_")
        }
    }

    public func handle(_ request: HTTPRequest, context: HTTPRequestContext, respond: @escaping @Sendable (HTTPResponse) -> Void) {
        let requestID = context.requestID
        guard let (route, allowed) = route(for: request.path) else {
            respond(Self.finish(.error(404, reason: "not_found", "no such path"), route: nil, requestID: requestID))
            return
        }
        guard allowed.contains(request.method) else {
            let refused = HTTPResponse.error(405, reason: "method_not_allowed", "method not allowed here", headers: ["Allow": allowed.joined(separator: ", ")])
            respond(Self.finish(refused, route: route, requestID: requestID))
            return
        }
        let reply: @Sendable (HTTPResponse) -> Void = { respond(Self.finish($0, route: route, requestID: requestID)) }
        switch route {
        case .appSiteAssociation:
            guard let aasaBody else { return reply(.error(404, reason: "not_found", "no app is configured")) }
            reply(HTTPResponse(status: 200, headers: ["Content-Type": "application/json", "Cache-Control": "public, max-age=3600"], body: aasaBody))
        case .resetPage, .resetNewLink, .linkPage:
            handlePage(route, request, context: context, reply: reply)
        case .stylesheet:
            reply(Self.stylesheetResponse)
        case .health:
            call("gateway.health", params: [:], request: request, context: context) { reply(Self.livenessResponse($0)) }
        case .rpc:
            guard Self.acceptsJSON(request) else { return reply(Self.unsupportedMediaType) }
            handleRPC(request, context: context, reply: reply)
        case .method, .passwordRequest, .passwordValidate, .passwordReset:
            guard Self.acceptsJSON(request) else { return reply(Self.unsupportedMediaType) }
            handleFriendly(route, request, context: context, reply: reply)
        }
    }

    // MARK: Friendly routes

    private func handleFriendly(_ route: Route, _ request: HTTPRequest, context: HTTPRequestContext, reply: @escaping @Sendable (HTTPResponse) -> Void) {
        var params: [String: JSON]
        switch Self.bodyObject(request) {
        case .failure(let error): return reply(Self.apiResponse(.failure(error)))
        case .success(let object): params = object
        }
        let method: String
        switch route {
        case .method(let name): method = name
        case .passwordRequest: method = "reset.request"
        case .passwordValidate: method = "reset.validate"
        default: method = "reset.complete"
        }
        if case .method = route {
            switch Self.bearerToken(request) {
            case .failure(let error): return reply(Self.apiResponse(.failure(error)))
            case .success(nil): break
            case .success(let token?):
                if let given = params["session"], given != .string(token) {
                    return reply(Self.apiResponse(.failure(.invalidParams("the session is given twice, differently (header and body)", field: "session"))))
                }
                params["session"] = .string(token)
            }
        }
        call(method, params: .object(params), request: request, context: context) { outcome in
            if route == .passwordValidate, case .failure(let error) = outcome, error.httpStatus < 500, error.httpStatus != 429 {
                // The seed's contract: 200 when the token is valid, 400 otherwise.
                return reply(Self.apiResponse(.failure(error), status: 400))
            }
            reply(Self.apiResponse(outcome))
        }
    }

    /// The request body as a JSON object; an empty body is `{}`.
    static func bodyObject(_ request: HTTPRequest) -> Result<[String: JSON], RPCError> {
        if request.body.isEmpty { return .success([:]) }
        let limits = JSONLimits(maxDepth: JSONLimits.default.maxDepth, maxBytes: request.body.count, maxStringBytes: request.body.count)
        let json: JSON
        do {
            json = try JSONParser.parse(request.body, limits: limits)
        } catch {
            return .failure(RPCError.parseError("the body is not valid JSON: \(error.description)"))
        }
        guard case .object(let members) = json else { return .failure(.invalidParams("the body must be a JSON object")) }
        return .success(members)
    }

    /// `Authorization: Bearer <token>`: nil when absent; an error for another scheme or a malformed token.
    static func bearerToken(_ request: HTTPRequest) -> Result<String?, RPCError> {
        let values = request.headers.values("Authorization")
        guard let value = values.first else { return .success(nil) }
        let parts = value.split(separator: " ", omittingEmptySubsequences: true)
        guard values.count == 1, parts.count == 2, parts[0].lowercased() == "bearer", parts[1].utf8.count <= 1024 else {
            return .failure(RPCError(.unauthenticated, "Authorization must be `Bearer <session token>`"))
        }
        return .success(String(parts[1]))
    }

    // MARK: POST /rpc

    private func handleRPC(_ request: HTTPRequest, context: HTTPRequestContext, reply: @escaping @Sendable (HTTPResponse) -> Void) {
        let limits = JSONLimits(maxDepth: JSONLimits.default.maxDepth, maxBytes: max(request.body.count, 1), maxStringBytes: max(request.body.count, 1))
        switch RPCDecoder.decode(line: request.body, limits: limits, maxBatch: settings.maxBatchSize) {
        case .failure(let response):
            reply(Self.rpcResponse(400, response.encoded()))
        case .single(.invalid(let response)):
            reply(Self.rpcResponse(400, response.encoded()))
        case .single(.request(let rpcRequest)):
            dispatchEntry(rpcRequest, requestID: context.requestID, request: request, context: context) { response in
                guard let response else { return reply(Self.rpcResponse(204, [])) }
                reply(Self.rpcResponse(200, response.encoded()))
            }
        case .batch(let entries):
            let batch = BatchState(entries: entries.count, answers: entries.filter(\.expectsAnswer).count)
            let finish: @Sendable (RPCResponse?) -> Void = { response in
                guard let done = batch.add(response) else { return }
                reply(done.isEmpty ? Self.rpcResponse(204, []) : Self.rpcResponse(200, done))
            }
            for (index, entry) in entries.enumerated() {
                switch entry {
                case .invalid(let response): finish(response)
                case .request(let rpcRequest):
                    dispatchEntry(rpcRequest, requestID: "\(context.requestID).\(index)", request: request, context: context, completion: finish)
                }
            }
        }
    }

    /// One JSON-RPC request through the dispatcher; the answer, or nil for a notification.
    private func dispatchEntry(
        _ rpcRequest: RPCRequest, requestID: String, request: HTTPRequest, context: HTTPRequestContext,
        completion: @escaping @Sendable (RPCResponse?) -> Void
    ) {
        var stripped = rpcRequest
        stripped.meta = nil  // the public door never believes caller meta
        let callContext = makeCallContext(method: rpcRequest.method, requestID: requestID, request: request, context: context)
        dispatcher.dispatch(stripped, context: callContext) { outcome in
            guard let id = rpcRequest.id else { return completion(nil) }
            completion(RPCResponse(id: id, outcome: outcome))
        }
    }

    private static func rpcResponse(_ status: Int, _ body: [UInt8]) -> HTTPResponse {
        HTTPResponse(status: status, headers: status == 204 ? [:] : ["Content-Type": "application/json"], body: body)
    }

    // MARK: Dispatch and context

    func call(
        _ method: String, params: JSON, request: HTTPRequest, context: HTTPRequestContext,
        completion: @escaping @Sendable (Result<JSON, RPCError>) -> Void
    ) {
        let callContext = makeCallContext(method: method, requestID: context.requestID, request: request, context: context)
        dispatcher.dispatch(RPCRequest(method: method, params: params, id: .string(context.requestID)), context: callContext, reply: completion)
    }

    func makeCallContext(method: String, requestID: String, request: HTTPRequest, context: HTTPRequestContext) -> CallContext {
        CallContext(
            method: method, requestID: requestID, client: clientAddress(request, peer: context.peer?.host),
            logger: context.logger, deadlineMilliseconds: context.deadlineMilliseconds)
    }

    /// The peer's address; behind a trusted proxy, the right-most `X-Forwarded-For` entry that
    /// is not itself a trusted proxy (entries further left are the client's own claims).
    func clientAddress(_ request: HTTPRequest, peer: String?) -> String? {
        guard let peer, settings.trustedProxies.contains(peer) else { return peer }
        let hops = request.headers.values("X-Forwarded-For").flatMap { $0.split(separator: ",") }.map { $0.trimmingHTTPWhitespace() }
        for hop in hops.reversed() where !hop.isEmpty && !settings.trustedProxies.contains(hop) {
            return hop.utf8.count <= 64 ? hop : peer
        }
        return peer
    }

    // MARK: Responses

    /// `{"result": ...}` with 200, or `{"error": {...}}` with the status of its reason
    /// (`Retry-After` from `data.retry_after`, `WWW-Authenticate` on 401). The one rule of every
    /// route but `/rpc`: `error.code` is the response's HTTP status (a JSON-RPC code such as
    /// -32602 becomes its status, 400); `data.reason` says why.
    static func apiResponse(_ outcome: Result<JSON, RPCError>, status overrideStatus: Int? = nil) -> HTTPResponse {
        switch outcome {
        case .success(let result):
            return .json(overrideStatus ?? 200, ["result": result])
        case .failure(let error):
            let status = overrideStatus ?? error.httpStatus
            var headers = HTTPHeaders()
            if let retry = error.data?["retry_after"] {
                let seconds: Int64? = switch retry {
                case .int(let value): value
                case .double(let value) where value.isFinite: Int64(value.rounded(.up))
                default: nil
                }
                if let seconds { headers.set("Retry-After", String(max(0, seconds))) }
            }
            if status == 401 { headers.set("WWW-Authenticate", "Bearer") }
            var body = error
            body.code = status
            return .json(status, ["error": body.json], headers: headers)
        }
    }

    /// `/healthz` on the public door: the status alone, whatever the dispatcher answered beside
    /// it (200 `ok`, else 503 `down`). Replicas and figures are the operator listener's.
    static func livenessResponse(_ outcome: Result<JSON, RPCError>) -> HTTPResponse {
        guard case .success(let health) = outcome else { return apiResponse(outcome, status: 503) }
        let serving = health["status"]?.stringValue == "ok"
        return .json(serving ? 200 : 503, ["status": .string(serving ? "ok" : "down")])
    }

    static let unsupportedMediaType = HTTPResponse.error(415, reason: "unsupported_media_type", "send Content-Type: application/json")

    /// A JSON body (or none, or one without a declared type) is accepted; any other declared type is 415.
    static func acceptsJSON(_ request: HTTPRequest) -> Bool {
        guard let type = request.headers["Content-Type"] else { return true }
        let mediaType = type.split(separator: ";", maxSplits: 1).first.map { $0.trimmingHTTPWhitespace().lowercased() } ?? ""
        return mediaType == "application/json" || (mediaType.hasPrefix("application/") && mediaType.hasSuffix("+json"))
    }

    /// Headers every door response carries (`X-Request-Id` is the id the gateway's access log
    /// and the services' logs carry); reset routes also never leak their URL as a referrer.
    static func finish(_ response: HTTPResponse, route: Route?, requestID: String) -> HTTPResponse {
        var response = response
        response.headers.set("X-Request-Id", requestID)
        if response.headers["Cache-Control"] == nil { response.headers.set("Cache-Control", "no-store") }
        response.headers.set("X-Content-Type-Options", "nosniff")
        switch route {
        case .passwordRequest?, .passwordValidate?, .passwordReset?, .resetPage?, .resetNewLink?, .linkPage?:
            response.headers.set("Referrer-Policy", "no-referrer")
        default: break
        }
        return response
    }

    /// The apple-app-site-association document: universal links (both the iOS 13+ `appIDs` /
    /// `components` form and the older `appID` / `paths` form) and web credentials.
    static func appSiteAssociation(_ settings: Settings) -> JSON {
        let paths = settings.aasaPaths.map { JSON.string($0) }
        let components = settings.aasaPaths.map { JSON.object(["/": .string($0)]) }
        let details = settings.aasaAppIDs.map { appID -> JSON in
            ["appID": .string(appID), "appIDs": [.string(appID)], "paths": .array(paths), "components": .array(components)]
        }
        return [
            "applinks": ["apps": [], "details": .array(details)],
            "webcredentials": ["apps": .array(settings.aasaAppIDs.map { .string($0) })],
        ]
    }
}

/// Gathers a batch's answers from any thread; produces the encoded array (or `[]` bytes empty
/// for all-notifications) when the last entry finishes.
private final class BatchState: @unchecked Sendable {
    private let lock = Lock()
    private var remaining: Int
    private var collector: BatchCollector
    private var line: [UInt8]?

    init(entries: Int, answers: Int) {
        remaining = entries
        collector = BatchCollector(expecting: answers)
    }

    func add(_ response: RPCResponse?) -> [UInt8]? {
        lock.lock()
        defer { lock.unlock() }
        remaining -= 1
        if let response, let complete = collector.add(response) { line = complete }
        if remaining > 0 { return nil }
        return line ?? []
    }
}
