import HTTP

/// How an SMS or webhook provider reaches its HTTP API, and the one rule they share for what a
/// try's answer means.
struct ProviderAPI: Sendable {
    let provider: String
    let client: HTTPClient
    let retry: RetryPolicy

    /// Sends the request `makeRequest` builds for each try until an answer passes, a failure is
    /// permanent, or the tries run out. No answer at all (connect, TLS, timeout) is transient; a
    /// status outside 2xx is transient only where `RetryPolicy.isTransient` says so, and is
    /// described by the status and `statusDetail` (the provider's own error words); a 2xx answer
    /// goes to `check`, which may still refuse it.
    func send(
        _ makeRequest: () -> HTTPClient.Request,
        statusDetail: (HTTPClient.Response) -> String = { _ in "" },
        check: (HTTPClient.Response) throws(DeliveryError) -> Void = { _ in }
    ) throws(DeliveryError) {
        try retry.run(provider: provider) { () throws(DeliveryError) in
            let request = makeRequest()
            let response: HTTPClient.Response
            do {
                response = try client.send(request)
            } catch {
                throw DeliveryError(provider: provider, detail: String(describing: error), permanent: false)
            }
            guard response.isSuccess else {
                throw DeliveryError(
                    provider: provider, detail: "HTTP \(response.status)\(statusDetail(response))",
                    permanent: !RetryPolicy.isTransient(status: response.status))
            }
            try check(response)
        }
    }

}
