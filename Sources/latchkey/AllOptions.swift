import Delivery
import Identity
import ServiceKit
import Verification

/// Every configuration option of every executable, for `latchkey options` and the drift check.
enum AllOptions {
    static var catalog: [ConfigOption] {
        var seen = Set<String>()
        return (CommonOptions.all + IdentityOptions.all + DeliveryOptions.all + ProviderFactory.options + VerificationOptions.all
            + [CallCommand.gatewayOption] + UpCommand.options + BenchCommand.options)
            .filter { seen.insert($0.name).inserted }
    }
}
