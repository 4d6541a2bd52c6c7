import Foundation
import LineProtocol
import Platform
import StackLauncher
import TestSupport
import XCTest

/// Records HTTP requests on 127.0.0.1 and answers each with one fixed reply. For checking what the
/// verification executable sends to Vonage and to the voice webhook.
final class VerificationRecordingHTTPServer: @unchecked Sendable {
    struct Received {
        let path: String
        let headers: [String: String]
        let body: String
    }

    let port: Int
    private let fd: Int32
    private let reply: String
    private let lock = NSLock()
    private var requests: [Received] = []
    private let done = DispatchSemaphore(value: 0)

    init(replyBody: String) throws {
        reply = replyBody
        (fd, port) = try LoopbackSocket.listen(backlog: 16)
        Thread { [self] in serve() }.start()
    }

    func stop() {
        shutdown(fd, Int32(SHUT_RDWR))
        close(fd)
        _ = done.wait(timeout: .now() + 5)
    }

    var received: [Received] {
        lock.lock()
        defer { lock.unlock() }
        return requests
    }

    private func serve() {
        defer { done.signal() }
        while true {
            let connection = accept(fd, nil, nil)
            if connection < 0 {
                if errno == EINTR { continue }
                return
            }
            if let request = ReceivedHTTPRequest.read(from: connection) {
                let headers = Dictionary(request.headers.map { ($0.name.lowercased(), $0.value) }) { _, last in last }
                lock.lock()
                requests.append(Received(path: request.path, headers: headers, body: request.bodyText))
                lock.unlock()
            }
            let response = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(reply.utf8.count)\r\nConnection: close\r\n\r\n\(reply)"
            _ = Array(response.utf8).withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            close(connection)
        }
    }
}

/// `--delivery vonage` with the voice fallback through `--webhook-url`, both pointed at a local
/// server: the SMS arrives as Vonage's documented form, the call as a signed webhook.
final class VerificationProviderEndToEndTests: VerificationStackTestCase {
    var vonage: VerificationRecordingHTTPServer!
    var webhook: VerificationRecordingHTTPServer!

    override func setUpWithError() throws {
        vonage = try VerificationRecordingHTTPServer(replyBody: #"{"message-count":"1","messages":[{"status":"0","message-id":"m1"}]}"#)
        webhook = try VerificationRecordingHTTPServer(replyBody: "{}")
        try super.setUpWithError()
    }

    override func tearDown() {
        super.tearDown()
        vonage?.stop()
        webhook?.stop()
    }

    override func stackOptions(_ options: inout Stack.Options) {
        super.stackOptions(&options)
        options.serviceEnvironment["verification", default: [:]].merge([
            "LATCHKEY_DELIVERY": "vonage", "LATCHKEY_VONAGE_URL": "http://127.0.0.1:\(vonage.port)",
            "LATCHKEY_VONAGE_API_KEY": "key123", "LATCHKEY_VONAGE_API_SECRET": "secret456", "LATCHKEY_VONAGE_FROM": "DemoBank",
            "LATCHKEY_WEBHOOK_URL": "http://127.0.0.1:\(webhook.port)/voice", "LATCHKEY_WEBHOOK_SECRET": "voice-webhook-secret-1",
        ]) { _, new in new }
    }

    func testSmsThroughVonageThenVoiceThroughTheWebhook() throws {
        let client = try direct("verification")
        let id = try start(client, ["number": "+15555550140", "purpose": "login", "workflow": "sms_voice", "next_event_wait_s": 1])
        let smsDeadline = Date().addingTimeInterval(10)
        while vonage.received.isEmpty && Date() < smsDeadline { usleep(50_000) }  // the queued message goes out after the answer
        let sms = try XCTUnwrap(vonage.received.first)
        XCTAssertEqual(sms.path, "/sms/json")
        XCTAssertEqual(sms.headers["content-type"], "application/x-www-form-urlencoded")
        var form: [String: String] = [:]
        for pair in sms.body.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map { String($0).removingPercentEncoding ?? "" }
            form[parts[0]] = parts.count > 1 ? parts[1] : ""
        }
        XCTAssertEqual(form["api_key"], "key123")
        XCTAssertEqual(form["api_secret"], "secret456")
        XCTAssertEqual(form["from"], "DemoBank")
        XCTAssertEqual(form["to"], "15555550140")
        XCTAssertEqual(form["client-ref"], id)
        let smsCode = try XCTUnwrap(Self.code(in: form["text"] ?? "", spoken: false))
        XCTAssertTrue(outbox().isEmpty, "nothing goes to the outbox")

        let deadline = Date().addingTimeInterval(10)
        while webhook.received.isEmpty && Date() < deadline { usleep(50_000) }
        let call = try XCTUnwrap(webhook.received.first, "the voice step fires after the wait")
        XCTAssertEqual(call.path, "/voice")
        let body = try JSONParser.parse(call.body)
        XCTAssertEqual(body["channel"], "voice")
        XCTAssertEqual(body["to"], "+15555550140")
        XCTAssertEqual(body["request_id"]?.stringValue, id)
        XCTAssertTrue(call.headers["x-latchkey-signature"]?.hasPrefix("sha256=") ?? false)
        let voiceCode = try XCTUnwrap(Self.code(in: body["text"]?.stringValue ?? "", spoken: true))
        if voiceCode != smsCode {
            assertError(try client.call("verification.check", ["request_id": .string(id), "code": .string(smsCode)]), "invalid_code")
        }
        XCTAssertEqual(try client.result("verification.check", ["request_id": .string(id), "code": .string(voiceCode)]), ["status": "verified"])
        XCTAssertFalse(stack.member("verification").log.contains(voiceCode), "the code never reaches the log")
    }
}
