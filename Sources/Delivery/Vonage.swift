import HTTP
import LineProtocol

/// SMS through the Vonage (Nexmo) SMS API: `POST https://rest.nexmo.com/sms/json` with a form
/// body `api_key, api_secret, from, to, text` (+ `type=unicode` when the text is not plain
/// ASCII, e.g. Russian), `to` in international format without `+`. The answer is JSON
/// `{"message-count": "1", "messages": [{"status": "0", ...}]}`; a non-zero status carries
/// `error-text`. Status 1 (throttled) and 5 (internal error) are worth a retry.
public final class VonageProvider: DeliveryProvider, @unchecked Sendable {
    public var name: String { api.provider }
    public let baseURL: HTTPURL
    private let apiKey: String
    private let apiSecret: String
    private let from: String
    private let api: ProviderAPI

    public static let defaultBaseURL = "https://rest.nexmo.com"

    public init(apiKey: String, apiSecret: String, from: String, client: HTTPClient, baseURL: HTTPURL, retry: RetryPolicy = RetryPolicy()) {
        (self.apiKey, self.apiSecret, self.from, self.baseURL) = (apiKey, apiSecret, from, baseURL)
        api = ProviderAPI(provider: "vonage", client: client, retry: retry)
    }

    public func deliver(_ message: OutgoingMessage) throws(DeliveryError) {
        guard message.channel == .sms else {
            throw DeliveryError(provider: name, detail: "only SMS goes through Vonage", permanent: true)
        }
        var fields = [("api_key", apiKey), ("api_secret", apiSecret), ("from", from), ("to", Self.vonageNumber(message.to)), ("text", message.text)]
        if !message.text.unicodeScalars.allSatisfy(\.isASCII) { fields.append(("type", "unicode")) }
        if let requestID = message.requestID, requestID.utf8.count <= 100 { fields.append(("client-ref", requestID)) }
        let request = HTTPClient.Request(
            method: "POST", url: baseURL.appending(path: "/sms/json"),
            headers: [("Content-Type", "application/x-www-form-urlencoded"), ("Accept", "application/json")],
            body: FormEncoding.encode(fields))
        try api.send({ request }, check: { response throws(DeliveryError) in
            guard let answer = try? JSONParser.parse(response.body), let messages = answer["messages"]?.arrayValue, !messages.isEmpty else {
                throw DeliveryError(provider: name, detail: "unreadable answer", permanent: false)
            }
            for part in messages {
                let status = part["status"]?.stringValue ?? "?"
                guard status == "0" else {
                    let text = part["error-text"]?.stringValue ?? "no error text"
                    throw DeliveryError(provider: name, detail: "status \(status): \(text)", permanent: !["1", "5"].contains(status))
                }
            }
        })
    }

    /// `+447700900000` -> `447700900000`.
    static func vonageNumber(_ e164: String) -> String { e164.hasPrefix("+") ? String(e164.dropFirst()) : e164 }
}
