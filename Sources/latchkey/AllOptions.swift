import Delivery
import ServiceKit

/// Every configuration option of every executable, for `latchkey options` and the drift check.
enum AllOptions {
    static var catalog: [ConfigOption] {
        var seen = Set<String>()
        return (CommonOptions.all + DeliveryOptions.all + [CallCommand.gatewayOption] + UpCommand.options)
            .filter { seen.insert($0.name).inserted }
    }
}
