import Foundation

/// Runs a program to its end: its exit status and what it printed on stdout (stderr is dropped).
public func runProgram(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
}

/// curl as a real HTTP client: the status, the body and the response's head.
public enum Curl {
    public static let path = "/usr/bin/curl"

    public static var isInstalled: Bool { FileManager.default.isExecutableFile(atPath: path) }

    public struct Response {
        public let status: Int
        public let body: String
        /// The response head as received (status line and fields), for header checks.
        public let head: String
    }

    /// Runs `curl -sS` with `arguments`; `-w` appends the status after the body.
    public static func run(_ arguments: [String], maxTimeSeconds: Int = 15) throws -> Response {
        let headFile = NSTemporaryDirectory() + "curl-head-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: headFile) }
        let text = try runProgram(path, ["-sS", "--max-time", String(maxTimeSeconds), "-D", headFile, "-w", "\n%{http_code}"] + arguments).output
        guard let newline = text.lastIndex(of: "\n"), let status = Int(text[text.index(after: newline)...]) else {
            throw TestFailure("curl printed no status: \(text)")
        }
        let head = (try? String(contentsOfFile: headFile, encoding: .utf8)) ?? ""
        return Response(status: status, body: String(text[..<newline]), head: head)
    }
}
