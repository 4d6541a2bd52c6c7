import Contract
import Delivery
import LineProtocol
import Platform
import RPC
import Runtime
import ServiceKit

/// Sends the SMS that tells a number it is no longer the account's phone (identity records one
/// in each phone change's transaction; identity has no SMS provider). At least once: a notice
/// is reported sent only after the provider took it, so a stop in between sends it again. A
/// number the provider refuses for good is reported too (nothing more can be done for it).
public struct PhoneNoticeSender: Sendable {
    let identity: any IdentityDirectory
    let sms: DeliveryProvider
    let brand: String
    let logger: Logger
    private let failures: FailureLog

    public init(identity: any IdentityDirectory, sms: DeliveryProvider, brand: String, logger: Logger) {
        (self.identity, self.sms, self.brand, self.logger) = (identity, sms, brand, logger.with(["notice": "phone_changed"]))
        failures = FailureLog("phone notice pass", logger: self.logger)
    }

    public func start(on host: ServiceHost) throws {
        try PeriodicPass.followingIdentity(on: host) { runPass() }
    }

    /// Sends what is due; answers how many were reported sent.
    @discardableResult
    public func runPass() -> Int {
        let context = PeriodicPass.callContext(PhoneNoticeContract.due, requestID: "phone-notices", logger: logger)
        var reported = 0
        do throws(RPCError) {
            let due = try identity.callAndWait(PhoneNoticeContract.due, ["limit": 16], context: context)["notices"]?.arrayValue ?? []
            for notice in due {
                guard let id = notice["notice_id"]?.intValue, let number = notice["number"]?.stringValue else { continue }
                let locale = notice["locale"]?.stringValue.flatMap(MessageLocale.init(rawValue:)) ?? .english
                do throws(DeliveryError) {
                    try sms.deliver(OutgoingMessage(channel: .sms, to: number, text: MessageCatalog.phoneNumberLeft(brand: brand, locale: locale)))
                } catch {
                    guard error.permanent else {
                        logger.warning("phone notice not sent; retried at the next pass", ["error": .string(error.detail)])
                        continue
                    }
                    logger.warning("phone notice refused for good; given up", ["error": .string(error.detail)])
                }
                _ = try identity.callAndWait(PhoneNoticeContract.sent, ["notice_id": .int(id)], context: context)
                reported += 1
            }
            failures.succeeded()
        } catch {
            failures.failed(error.message)
        }
        return reported
    }
}
