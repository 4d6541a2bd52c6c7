import Platform
import ServiceKit
import StackLauncher

/// One base port for every command that talks to a stack, as `latchkey up --base-port P` laid it
/// out: the gateway on 127.0.0.1:P, identity P+1 ... reset P+4. `--base-port` / `LATCHKEY_BASE_PORT`
/// moves `call`, the operator commands and `bench` together; an address given by its own flag or
/// variable (`--gateway`, `--identity`, `--accounts`, `--address`) still wins.
enum BasePort {
    static let option = ConfigOption(
        "base-port", default: "7400",
        help: "the stack's base port: `latchkey up` puts the gateway there, identity P+1 ... reset P+4, the HTTP door P+80, the metrics listener P+85; `call`, the operator commands and `bench` talk to the stack there (an explicit address wins)")

    /// The address of `service` (a key of `Stack.portOffsets`): `addressOption` when set, else
    /// the base port's, else the option's default.
    static func address(of service: String, _ configuration: Configuration, addressOption: ConfigOption) throws(ConfigurationError) -> String {
        if configuration.isSet(addressOption) || !configuration.isSet(option) {
            return try configuration.requiredString(addressOption)
        }
        let base = try configuration.int(option, range: 1...(65535 - Stack.metricsPortOffset))
        return "127.0.0.1:\(base + Stack.portOffsets[service]!)"
    }
}
