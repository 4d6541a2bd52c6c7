import LineProtocol
import Platform
import RPC
import ServiceKit
import TLS

/// `latchkey call METHOD '{params}'`: one request to the gateway, the answer on stdout.
/// Exit status 0 for a result, 1 for an error answer, 2 for bad arguments, 3 when the gateway
/// cannot be reached.
enum CallCommand {
    static let gatewayOption = ConfigOption("gateway", default: "127.0.0.1:7400", help: "the gateway `latchkey call` talks to (tls://HOST:PORT: over TLS)")
    static let tlsOption = ConfigOption("tls", default: "false", help: "`latchkey call`: speak TLS to the gateway (its certificate must chain to the system store or --tls-ca and name its host)")
    static let tlsCAOption = ConfigOption(
        "tls-ca", help: "`latchkey call`: PEM certificates trusted instead of the system store (implies --tls); a server presenting one of them itself is trusted under any name, as the compose health check trusts the gateway's own certificate")
    static let options = [gatewayOption, tlsOption, tlsCAOption, BasePort.option]

    static func run(arguments: [String], environment: [String: String]) throws -> Int32 {
        let configuration = try Configuration(arguments: arguments, environment: environment, options: options)
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
        let (gateway, tls) = try address(configuration)
        let client: LineClient
        do {
            client = try LineClient(gateway, tls: tls)
        } catch let error as SystemError where [ECONNREFUSED, ENOENT, EHOSTUNREACH, ETIMEDOUT].contains(error.errno) {
            throw StackUnreachable(gateway: gateway, reason: error)
        }
        let response = try client.call(method, params)
        print(String(decoding: response.encoded(), as: UTF8.self))
        if case .failure = response.outcome { return 1 }
        return 0
    }

    /// The gateway's address, and a TLS context when `tls://`, `--tls` or `--tls-ca` asks for TLS.
    static func address(_ configuration: Configuration) throws -> (Endpoint, TLSClientContext?) {
        var text = try BasePort.address(of: "gateway", configuration, addressOption: gatewayOption)
        let scheme = "tls://"
        let prefixed = text.lowercased().hasPrefix(scheme)
        if prefixed { text.removeFirst(scheme.count) }
        guard let endpoint = Endpoint(text) else { throw ConfigurationError("\(gatewayOption.flag) must be HOST:PORT or tls://HOST:PORT") }
        let authorities = configuration.string(tlsCAOption).flatMap { $0.isEmpty ? nil : $0 }
        let wantsTLS = try configuration.bool(tlsOption)
        guard prefixed || authorities != nil || wantsTLS else { return (endpoint, nil) }
        do {
            return (endpoint, try TLSClientContext(trustedCertificatesFile: authorities, pinning: authorities != nil))
        } catch {
            throw ConfigurationError("\(tlsCAOption.flag): \(error)")
        }
    }
}

/// No gateway answered at the address: the most common cause is a stack that is not running.
struct StackUnreachable: Error, CustomStringConvertible {
    let gateway: Endpoint
    let reason: SystemError

    var description: String { "no gateway at \(gateway) (\(reason)): is the stack running? try `latchkey up`" }
}
