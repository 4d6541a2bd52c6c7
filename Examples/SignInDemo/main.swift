// A consumer of LatchkeyClient's public surface (no @testable): signs in the demo user of
// `latchkey up --demo`, pays the SMS (or authenticator-app) factor with the code typed on stdin,
// prints the balances; with --new-password, then changes the password (the code it just paid is
// the recent step-up the change needs) and the demo's other devices are signed out.
//
//   swift run latchkey up --demo        (prints the demo password; codes go to ./.latchkey/outbox.jsonl)
//   swift run SignInDemo --password "$LATCHKEY_DEMO_PASSWORD"
// A stack moved with `latchkey up --base-port P` is found with --base-port P or LATCHKEY_BASE_PORT=P
// (the HTTP door on P+80); --url names the door outright and wins.
import Foundation
import LatchkeyClient

struct DemoOptions {
    var url: URL?
    var basePort = ProcessInfo.processInfo.environment["LATCHKEY_BASE_PORT"]
    var username = "demo"
    var password = ProcessInfo.processInfo.environment["LATCHKEY_DEMO_PASSWORD"]
    var deviceID = "signin-demo"
    var newPassword: String?

    init(arguments: [String]) throws {
        var remaining = arguments[...]
        while let flag = remaining.popFirst() {
            guard let value = remaining.popFirst() else { throw DemoFailure("\(flag) needs a value") }
            switch flag {
            case "--url": url = try URL(string: value).orThrow(DemoFailure("--url: not a URL"))
            case "--base-port": basePort = value
            case "--username": username = value
            case "--password": password = value
            case "--device-id": deviceID = value
            case "--new-password": newPassword = value
            default: throw DemoFailure("unknown option \(flag) (use --url, --base-port, --username, --password, --device-id, --new-password)")
            }
        }
    }

    /// The HTTP door: --url, else P+80 of the base port, else 7480.
    func door() throws -> URL {
        if let url { return url }
        guard let basePort else { return URL(string: "http://127.0.0.1:7480")! }
        guard let port = Int(basePort), (1...65455).contains(port) else { throw DemoFailure("--base-port / LATCHKEY_BASE_PORT: not a port") }
        return URL(string: "http://127.0.0.1:\(port + 80)")!
    }
}

struct DemoFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension Optional {
    func orThrow(_ error: some Error) throws -> Wrapped {
        guard let self else { throw error }
        return self
    }
}

/// 500000 USD minor units -> "5000.00 USD" (two minor digits, as USD and EUR have).
func formatted(_ account: Account) -> String {
    let sign = account.balance < 0 ? "-" : ""
    let magnitude = account.balance.magnitude
    return "\(sign)\(magnitude / 100).\(String(format: "%02d", Int(magnitude % 100))) \(account.currency)"
}

/// One line typed on stdin, without its surrounding spaces.
func typedLine() throws -> String {
    fflush(nil)  // the prompt must reach a script waiting for it (stdout is a pipe there) before we wait
    return try readLine(strippingNewline: true).orThrow(DemoFailure("no code on stdin")).trimmingCharacters(in: .whitespaces)
}

func run() async throws {
    let options = try DemoOptions(arguments: Array(CommandLine.arguments.dropFirst()))
    let password = try options.password.orThrow(DemoFailure("give --password or LATCHKEY_DEMO_PASSWORD"))
    let client = LatchkeyClient(baseURL: try options.door())

    let signedIn = try await client.signIn(username: options.username, password: password, deviceID: options.deviceID)
    if signedIn.requiredFactors.contains(.totp) {
        print("type the code your authenticator app shows:")
        try await client.verifyAuthenticatorCode(try typedLine())
    } else if signedIn.requiredFactors.contains(.sms) {
        let verification = try await client.startCode(channel: .sms)
        print("a code was sent to the phone; type it:")
        try await client.checkCode(try typedLine(), requestID: verification.requestID)
    } else if signedIn.needsSecondFactor {
        throw DemoFailure("this demo pays the sms and totp factors; the session owes \(signedIn.requiredFactors)")
    }
    for account in try await client.balances() {
        print("\(account.name): \(formatted(account))")
    }
    if let newPassword = options.newPassword {
        let ended = try await client.changePassword(current: password, new: newPassword)
        print("password changed; \(ended) other session\(ended == 1 ? "" : "s") signed out")
    }
    try await client.signOut()
}

do {
    try await run()
} catch {
    FileHandle.standardError.write(Data("SignInDemo: \(error)\n".utf8))
    exit(1)
}
