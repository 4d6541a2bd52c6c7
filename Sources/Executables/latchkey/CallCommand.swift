import Foundation
import LineProtocol
import ServiceKit

/// `latchkey call METHOD '{params}'`: one request to the gateway, the answer on stdout.
/// Exit status 0 for a result, 1 for an error answer.
enum CallCommand {
    static let gatewayOption = ConfigOption("gateway", default: "127.0.0.1:7400", help: "the gateway `latchkey call` talks to")

    static func run(arguments: [String], environment: [String: String]) throws -> Int32 {
        let configuration = try Configuration(arguments: arguments, environment: environment, options: [gatewayOption])
        guard let method = configuration.positional.first else { throw ConfigurationError("call needs a METHOD") }
        var params: JSON?
        if configuration.positional.count > 1 {
            do {
                params = try JSONParser.parse(configuration.positional[1])
            } catch {
                throw ConfigurationError("params are not valid JSON: \(error)")
            }
        }
        let client = try LineClient(try configuration.endpoint(gatewayOption))
        let response = try client.call(method, params)
        print(String(decoding: response.encoded(), as: UTF8.self))
        if case .failure = response.outcome { return 1 }
        return 0
    }
}
