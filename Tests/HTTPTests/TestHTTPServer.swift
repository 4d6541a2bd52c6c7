import Foundation
@testable import HTTP
import LineProtocol
import Platform
@testable import Runtime
import ServerTestSupport
import TestSupport

/// Routes for testing the server itself: `POST /v1/t/echo` answers `{"result": <body>}`,
/// `POST /v1/t/slow {"ms": N}` answers after N ms, `POST /v1/t/hold` answers once the test
/// releases `hold`, and `GET|HEAD /healthz` answers `{"status":"ok"}`. Records every path it saw.
final class TestRoutes: HTTPHandler, @unchecked Sendable {
    let paths = SharedList<String>()
    let hold = Blocker()
    /// `t.hold` and `t.slow` requests whose handler has finished (answered or not).
    let finished = Counter()

    func handle(_ request: HTTPRequest, context: HTTPRequestContext, respond: @escaping @Sendable (HTTPResponse) -> Void) {
        paths.append(request.path)
        let body = (try? JSONParser.parse(request.body)) ?? .null
        let finished = self.finished
        switch (request.method, request.path) {
        case ("POST", "/v1/t/echo"):
            respond(.json(200, ["result": body], headers: ["Cache-Control": "no-store"]))
        case ("POST", "/v1/t/slow"):
            // A handler whose work takes time (what the ordering tests need), not synchronisation.
            let milliseconds = Int(body["ms"]?.intValue ?? 100)
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(milliseconds)) {
                respond(.json(200, ["result": ["slept_ms": .int(Int64(milliseconds))]]))
                finished.add()
            }
        case ("POST", "/v1/t/hold"):
            let hold = self.hold
            DispatchQueue.global().async {
                hold.hold()
                respond(.json(200, ["result": "held"]))
                finished.add()
            }
        case ("GET", "/healthz"), ("HEAD", "/healthz"):
            respond(.json(200, ["status": "ok"]))
        default:
            respond(.json(404, ["error": "not_found"]))
        }
    }
}

/// An `HTTPServer` over `TestRoutes` on 127.0.0.1:0, on its own loop thread.
final class TestHTTPServer: HTTPServerOnLoop, @unchecked Sendable {
    let routes: TestRoutes

    init(limits: HTTPLimits = HTTPLimits()) throws {
        let routes = TestRoutes()
        self.routes = routes
        try super.init(handler: routes, limits: limits)
    }
}
