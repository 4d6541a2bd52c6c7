/// Every method of Latchkey, from every service, in one list.
public enum Contract {
    public static let methods: [MethodContract] =
        GatewayContract.all + BuiltinContract.all + IdentityContract.all + IdentityAccountContract.all + IdentityFactorsContract.all + IdentityPasskeyContract.all + IdentityInternalContract.all
        + IdentityOperatorContract.all + AccountDeletionContract.all + DataExportContract.all + PhoneNoticeContract.all + VerificationContract.all + AccountsContract.all + ResetContract.all

    /// The methods a door of the gateway reaches.
    public static var publicMethods: [MethodContract] { methods.filter { $0.access.isPublic } }

    private static let byName: [String: MethodContract] = Dictionary(uniqueKeysWithValues: methods.map { ($0.name, $0) })

    public static func method(named name: String) -> MethodContract? { byName[name] }

    /// The services behind the gateway, in a fixed order.
    public static let services = BuiltinContract.services
}
