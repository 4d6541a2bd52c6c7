import HTTP
import LineProtocol
import Secrets

/// SMS through Twilio's Programmable Messaging API:
/// `POST https://api.twilio.com/2010-04-01/Accounts/{AccountSid}/Messages.json`, HTTP Basic auth
/// (Account SID : Auth Token), form body `To` (E.164), `From` (a Twilio number) or
/// `MessagingServiceSid` (an `MG...` sender), `Body`. Success is `201 Created` with the Message
/// resource (`sid`, `status`); errors are JSON `{"code", "message", "more_info", "status"}`.
public final class TwilioProvider: DeliveryProvider, @unchecked Sendable {
    public var name: String { api.provider }
    public let baseURL: HTTPURL
    private let accountSID: String
    private let authToken: String
    private let from: String
    private let api: ProviderAPI

    public static let defaultBaseURL = "https://api.twilio.com"

    public init(accountSID: String, authToken: String, from: String, client: HTTPClient, baseURL: HTTPURL, retry: RetryPolicy = RetryPolicy()) {
        (self.accountSID, self.authToken, self.from, self.baseURL) = (accountSID, authToken, from, baseURL)
        api = ProviderAPI(provider: "twilio", client: client, retry: retry)
    }

    public func deliver(_ message: OutgoingMessage) throws(DeliveryError) {
        guard message.channel == .sms else {
            throw DeliveryError(provider: name, detail: "only SMS goes through Twilio", permanent: true)
        }
        let sender = from.hasPrefix("MG") ? ("MessagingServiceSid", from) : ("From", from)
        let request = HTTPClient.Request(
            method: "POST", url: baseURL.appending(path: "/2010-04-01/Accounts/\(FormEncoding.escape(accountSID))/Messages.json"),
            headers: [
                ("Authorization", "Basic " + Base64.encode(Array("\(accountSID):\(authToken)".utf8))),
                ("Content-Type", "application/x-www-form-urlencoded"), ("Accept", "application/json"),
            ],
            body: FormEncoding.encode([("To", message.to), sender, ("Body", message.text)]))
        try api.send({ request }, statusDetail: Self.errorWords)
    }

    /// ` error 21211: The 'To' number is not a valid phone number.` from Twilio's error body.
    private static func errorWords(_ response: HTTPClient.Response) -> String {
        let answer = try? JSONParser.parse(response.body)
        let code = answer?["code"]?.intValue.map { " error \($0)" } ?? ""
        let text = answer?["message"]?.stringValue.map { ": \($0)" } ?? ""
        return code + text
    }
}
