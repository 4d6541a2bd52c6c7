import Accounts
import Delivery
import Gateway
import Identity
import Reset
import ServiceKit
import Verification

/// Every configuration option of every executable, for `latchkey options` and the drift check.
enum AllOptions {
    static var catalog: [ConfigOption] {
        var seen = Set<String>()
        return (CommonOptions.all + GatewayOptions.all + HTTPOptions.all + IdentityOptions.all + DeliveryOptions.all + ProviderFactory.options + VerificationOptions.all + AccountsProcess.options + ResetOptions.all + SMTPOptions.all
            + CallCommand.options + UpCommand.options + BenchCommand.options)
            .filter { seen.insert($0.name).inserted }
    }
}
