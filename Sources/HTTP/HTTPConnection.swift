import FoundationEssentials
import LineProtocol
import Platform
import Runtime

/// HTTP/1.1 on one server-side connection: parses requests, hands each to the handler,
/// writes responses strictly in request order (pipelining) however the handler finishes,
/// and applies the per-connection limits and timers. Confined to the loop thread.
final class HTTPConnection: ChannelDelegate, ServedConnection, @unchecked Sendable {
    /// One request awaiting (or holding) its response, in request order.
    private struct Slot {
        let sequence: Int
        let method: String
        let keepAlive: Bool
        let version: HTTPVersion
        let deadlineMilliseconds: Int64
        let startedMicroseconds: Int64
        var response: HTTPResponse?
    }

    let channel: Channel
    private let server: HTTPServer
    private var parser: HTTPRequestParser
    private var slots: [Slot] = []
    private var nextSequence = 0
    /// Set after a refused request, a request without keep-alive, or a drain: nothing more is read.
    private var stopParsing = false
    private var draining = false
    private var processing = false
    /// When the partially received request (head or body) started, for the slow-client timers.
    private var partialSinceMilliseconds: Int64?
    private var partialPhase: HTTPRequestParser.Phase = .idle
    private var lastActivityMilliseconds = MonotonicClock.nowMilliseconds()

    init(channel: Channel, server: HTTPServer) {
        self.channel = channel
        self.server = server
        self.parser = HTTPRequestParser(limits: server.limits.parser)
    }

    var inflightCount: Int { slots.count }

    // MARK: ChannelDelegate

    func channel(_ channel: Channel, didRead bytes: UnsafeRawBufferPointer) {
        lastActivityMilliseconds = MonotonicClock.nowMilliseconds()
        if stopParsing { return }
        parser.append(bytes)
        processInput()
    }

    func channelDidDrain(_ channel: Channel) { processInput() }

    func channelDidReadEndOfInput(_ channel: Channel) {
        processInput()
        closeIfFinished()
    }

    func channelDidClose(_ channel: Channel) {
        slots.removeAll()
        server.connectionClosed(self)
    }

    // MARK: Requests

    private func processInput() {
        guard !processing else { return }
        processing = true
        defer { processing = false }
        var saturated = false
        while channel.state == .open && !stopParsing {
            saturated = slots.count >= server.limits.maxPipelinedRequests || channel.isAboveHighWater
            if saturated { break }
            guard let event = parser.next() else { break }
            switch event {
            case .continueExpected:
                // Only when it cannot jump ahead of an earlier response; otherwise the client sends anyway.
                if slots.isEmpty { channel.write(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)) }
            case .failure(let failure):
                partialSinceMilliseconds = nil
                refuse(failure.status, failure.message)
            case .request(let request):
                partialSinceMilliseconds = nil
                if !request.keepAlive { stopParsing = true }
                start(request)
            }
        }
        if stopParsing || saturated { channel.pauseReading() } else { channel.resumeReading() }
        updatePartialTimer(saturated: saturated)
    }

    private func updatePartialTimer(saturated: Bool) {
        let phase = parser.phase
        guard !saturated, !stopParsing, phase == .head || phase == .body else {
            partialSinceMilliseconds = nil
            return
        }
        if partialSinceMilliseconds == nil || phase != partialPhase {
            partialSinceMilliseconds = MonotonicClock.nowMilliseconds()
            partialPhase = phase
        }
    }

    private func start(_ request: HTTPRequest) {
        nextSequence &+= 1
        let sequence = nextSequence
        let deadline = MonotonicClock.nowMilliseconds() + server.limits.requestTimeoutMilliseconds
        slots.append(Slot(
            sequence: sequence, method: request.method, keepAlive: request.keepAlive, version: request.version,
            deadlineMilliseconds: deadline, startedMicroseconds: MonotonicClock.nowMicroseconds()))
        let requestID = server.nextRequestID()
        let context = HTTPRequestContext(
            peer: channel.peer, requestID: requestID, deadlineMilliseconds: deadline,
            logger: server.logger.with(["http.request_id": .string(requestID)]))
        let loop = channel.loop
        server.handler.handle(request, context: context) { [weak self] response in
            guard let connection = self else { return }
            if loop.isInLoopThread {
                connection.complete(sequence: sequence, response: response)
            } else {
                loop.execute { connection.complete(sequence: sequence, response: response) }
            }
        }
    }

    /// A request that cannot be parsed: answer after the earlier responses, then close.
    private func refuse(_ status: Int, _ message: String) {
        stopParsing = true
        channel.pauseReading()
        nextSequence &+= 1
        var response = HTTPResponse.error(status, reason: status == 408 ? "timeout" : "bad_request", message)
        response.closesConnection = true
        slots.append(Slot(
            sequence: nextSequence, method: "", keepAlive: false, version: .http1_1,
            deadlineMilliseconds: .max, startedMicroseconds: MonotonicClock.nowMicroseconds(), response: response))
        server.logger.info("refused http request", [
            "net.peer": .string(channel.peer?.description ?? "?"), "http.status": .int(Int64(status)),
            "http.reason": .string(message),
        ])
        writeReadyResponses()
    }

    private func complete(sequence: Int, response: HTTPResponse) {
        // A late or second answer finds no empty slot and is dropped.
        guard let index = slots.firstIndex(where: { $0.sequence == sequence }), slots[index].response == nil else { return }
        slots[index].response = response
        writeReadyResponses()
        processInput()
        closeIfFinished()
    }

    private func writeReadyResponses() {
        while channel.state == .open, let first = slots.first, let response = first.response {
            slots.removeFirst()
            let keepAlive = first.keepAlive && !response.closesConnection && !(draining && slots.isEmpty)
            var bytes = Self.serialize(response, keepAlive: keepAlive, includeBody: first.method != "HEAD")
            if keepAlive && first.version == .http1_0 {
                // HTTP/1.0 needs the keep-alive it asked for said back; insert before the blank line.
                bytes.insert(contentsOf: Array("Connection: keep-alive\r\n".utf8), at: Self.headEnd(bytes))
            }
            channel.write(bytes)
            lastActivityMilliseconds = MonotonicClock.nowMilliseconds()
            if !first.method.isEmpty {
                server.logger.debug("http request", [
                    "http.method": .string(first.method), "http.status": .int(Int64(response.status)),
                    "http.duration_us": .int(MonotonicClock.nowMicroseconds() - first.startedMicroseconds),
                    "net.peer": .string(channel.peer?.description ?? "?"),
                ])
            }
            if !keepAlive {
                stopParsing = true
                slots.removeAll()
                channel.closeAfterFlush()
                return
            }
        }
    }

    private func closeIfFinished() {
        if (channel.endOfInput || draining) && slots.isEmpty && channel.state == .open {
            channel.closeAfterFlush()
        }
    }

    // MARK: Timers

    /// Called by the server's tick: request deadlines, slow heads and bodies, idle and stalled peers.
    func checkTimeouts(nowMilliseconds now: Int64) {
        let limits = server.limits
        for slot in slots where slot.response == nil && slot.deadlineMilliseconds <= now {
            complete(sequence: slot.sequence, response: .error(504, reason: "timeout", "the request took longer than \(limits.requestTimeoutMilliseconds) ms"))
        }
        guard channel.state == .open else { return }
        if let since = partialSinceMilliseconds {
            let isHead = partialPhase == .head
            let limit = isHead ? limits.headerTimeoutMilliseconds : limits.bodyTimeoutMilliseconds
            if now - since > limit {
                partialSinceMilliseconds = nil
                refuse(408, isHead ? "request head not received in time" : "request body not received in time")
                return
            }
        }
        if channel.isWriteStalled(nowMilliseconds: now, limitMilliseconds: limits.writeTimeoutMilliseconds) {
            server.logger.info("closing slow client", ["net.peer": .string(channel.peer?.description ?? "?"), "net.reason": "write_timeout"])
            channel.close()
        } else if slots.isEmpty && parser.phase == .idle && channel.pendingOutboundBytes == 0
            && now - lastActivityMilliseconds > limits.idleTimeoutMilliseconds
        {
            channel.close()
        }
    }

    /// During shutdown: finish what is in flight (the last response says `Connection: close`), then close.
    func drain() {
        draining = true
        stopParsing = true
        channel.pauseReading()
        closeIfFinished()
    }

    // MARK: Serialising

    /// Status line, the server's own headers, the handler's headers (minus framing ones and any
    /// value that could split the response), the blank line and the body.
    static func serialize(_ response: HTTPResponse, keepAlive: Bool, includeBody: Bool) -> [UInt8] {
        var text = "HTTP/1.1 \(response.status) \(HTTPStatus.phrase(response.status))\r\n"
        text += "Date: \(HTTPDate.now())\r\nServer: latchkey\r\n"
        if response.status != 204 && response.status >= 200 { text += "Content-Length: \(response.body.count)\r\n" }
        if !keepAlive { text += "Connection: close\r\n" }
        for (name, value) in response.headers where !reservedNames.contains(name.lowercased()) {
            guard !name.isEmpty, name.utf8.allSatisfy(HTTPRequestParser.isTokenByte),
                value.utf8.allSatisfy({ $0 == 0x09 || $0 >= 0x20 && $0 != 0x7F })
            else { continue }
            text += "\(name): \(value)\r\n"
        }
        text += "\r\n"
        var bytes = Array(text.utf8)
        if includeBody && response.status != 204 { bytes.append(contentsOf: response.body) }
        return bytes
    }

    private static let reservedNames: Set<String> = ["content-length", "connection", "date", "server", "transfer-encoding", "keep-alive"]

    /// Index of the blank line's CRLF at the end of a serialised head.
    private static func headEnd(_ bytes: [UInt8]) -> Int {
        var index = 3
        while index < bytes.count {
            if bytes[index - 3] == 0x0D && bytes[index - 2] == 0x0A && bytes[index - 1] == 0x0D && bytes[index] == 0x0A { return index - 1 }
            index += 1
        }
        return bytes.count
    }
}

/// IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`) for the `Date` header.
enum HTTPDate {
    private static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    private static let lock = Lock()
    nonisolated(unsafe) private static var cached: (seconds: Int64, text: String) = (0, "")

    /// The current date, formatted at most once a second.
    static func now() -> String {
        let seconds = WallClock.nowSeconds()
        lock.lock()
        defer { lock.unlock() }
        if cached.seconds != seconds { cached = (seconds, format(seconds: seconds)) }
        return cached.text
    }

    static func format(seconds: Int64) -> String {
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }
}
