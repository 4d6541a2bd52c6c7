import Foundation
import LineProtocol
import Platform
import StackLauncher
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
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.fd = fd
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard bound == 0, listen(fd, 16) == 0 else { throw MissingMessage(description: "cannot listen") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        port = Int(UInt16(bigEndian: address.sin_port))
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
            var data: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 8192)
            while true {
                let got = read(connection, &chunk, chunk.count)
                if got <= 0 { break }
                data += chunk[0..<got]
                if let end = data.firstRange(of: [13, 10, 13, 10]) {
                    let head = String(decoding: data[..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
                    var headers: [String: String] = [:]
                    for line in head.dropFirst() {
                        if let colon = line.firstIndex(of: ":") {
                            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                        }
                    }
                    let length = Int(headers["content-length"] ?? "0") ?? 0
                    if data.count - end.upperBound >= length {
                        let path = String(head[0].split(separator: " ")[1])
                        lock.lock()
                        requests.append(Received(path: path, headers: headers, body: String(decoding: data[end.upperBound...], as: UTF8.self)))
                        lock.unlock()
                        break
                    }
                }
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
