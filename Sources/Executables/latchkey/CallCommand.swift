import LineProtocol
import Platform
import RPC
import ServiceKit

/// `latchkey call METHOD '{params}'`: one request to the gateway, the answer on stdout.
/// Exit status 0 for a result, 1 for an error answer, 2 for bad arguments, 3 when the gateway
/// cannot be reached.
enum CallCommand {
    static let gatewayOption = ConfigOption("gateway", default: "127.0.0.1:7400", help: "the gateway `latchkey call` talks to")

    static func run(arguments: [String], environment: [String: String]) throws -> Int32 {
        let configuration = try Configuration(arguments: arguments, environment: environment, options: [gatewayOption])
        guard let method = configuration.positional.first else { throw ConfigurationError("call needs a METHOD") }
        guard configuration.positional.count <= 2 else { throw ConfigurationError("call takes METHOD and one JSON argument") }
        var params: JSON?
        if configuration.positional.count > 1 {
            do {
                params = try JSONParser.parse(configuration.positional[1])
            } catch {
                throw ConfigurationError("params are not valid JSON: \(error)")
            }
        }
        let gateway = try configuration.endpoint(gatewayOption)
        let client: LineClient
        do {
            client = try LineClient(gateway)
        } catch let error as SystemError where [ECONNREFUSED, ENOENT, EHOSTUNREACH, ETIMEDOUT].contains(error.errno) {
            throw StackUnreachable(gateway: gateway, reason: error)
        }
        let response = try client.call(method, params)
        print(String(decoding: response.encoded(), as: UTF8.self))
        if case .failure = response.outcome { return 1 }
        return 0
    }
}

/// No gateway answered at the address: the most common cause is a stack that is not running.
struct StackUnreachable: Error, CustomStringConvertible {
    let gateway: Endpoint
    let reason: SystemError

    var description: String { "no gateway at \(gateway) (\(reason)): is the stack running? try `latchkey up`" }
}
