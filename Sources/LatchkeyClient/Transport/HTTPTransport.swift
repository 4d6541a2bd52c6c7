import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Sends one typed call to the gateway's HTTP door (`POST /v1/<service>/<method>`, JSON body,
/// the session as `Authorization: Bearer`) and turns the answer into its `Response` or a
/// `LatchkeyError`, repeating it only as `RetryPolicy` allows.
struct HTTPTransport: Sendable {
    let baseURL: URL
    let session: URLSession
    let retryPolicy: RetryPolicy

    func send<Request: LatchkeyRequest>(_ request: Request, token: String?) async throws(LatchkeyError) -> Request.Response {
        let urlRequest = try makeURLRequest(request, token: token)
        var attempt = 1
        while true {
            do {
                return try await sendOnce(urlRequest, as: Request.Response.self)
            } catch {
                guard let wait = retryPolicy.delay(after: error, attempt: attempt, retryClass: Request.retry) else { throw error }
                // Cancellation of the caller's task ends the wait and the call.
                do { try await Task.sleep(nanoseconds: UInt64(wait * 1_000_000_000)) } catch { throw LatchkeyError.network("cancelled") }
                attempt += 1
            }
        }
    }

    /// The body is encoded once: every retry sends the same bytes (the same idempotency key).
    private func makeURLRequest<Request: LatchkeyRequest>(_ request: Request, token: String?) throws(LatchkeyError) -> URLRequest {
        var urlRequest = URLRequest(url: baseURL.appendingPathComponent(String(Request.path.dropFirst())))
        urlRequest.httpMethod = "POST"
        urlRequest.setValue("application/json", forHTTPHeaderField: "Content-Type")
        urlRequest.setValue("application/json", forHTTPHeaderField: "Accept")
        if let token { urlRequest.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        do {
            urlRequest.httpBody = try Self.encoder.encode(request)
        } catch {
            // The models hold strings, integers, booleans and data: nothing JSON cannot carry.
            throw LatchkeyError.invalidParams(field: nil, rule: nil)
        }
        return urlRequest
    }

    private func sendOnce<Response: Decodable>(_ urlRequest: URLRequest, as: Response.Type) async throws(LatchkeyError) -> Response {
        let data: Data, response: URLResponse
        do {
            (data, response) = try await session.data(for: urlRequest)
        } catch let error as URLError {
            throw LatchkeyError.network("\(error.code.rawValue): \(error.localizedDescription)")
        } catch {
            throw LatchkeyError.network(String(describing: type(of: error)))
        }
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        if (200..<300).contains(status), let envelope = try? Self.decoder.decode(Success<Response>.self, from: data) {
            return envelope.result
        }
        guard let envelope = try? Self.decoder.decode(Failure.self, from: data) else { throw LatchkeyError.invalidResponse(status: status) }
        let retryAfter = (response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Retry-After").flatMap { Int($0) }
        // On the HTTP door `error.code` is the HTTP status itself (`protocol/http.md` §3).
        throw LatchkeyError(status: status, message: envelope.error.message, data: envelope.error.data ?? [:], retryAfterHeader: retryAfter)
    }

    private struct Success<Result: Decodable>: Decodable {
        let result: Result
    }

    private struct Failure: Decodable {
        struct Body: Decodable {
            let message: String
            let data: [String: JSONValue]?
        }
        let error: Body
    }

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.dataEncodingStrategy = .base64
        return encoder
    }()

    static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        return decoder
    }()
}
