import Contract
import LineProtocol

extension RPCClient {
    /// Calls another service's method by its declaration: the declared name, the params checked
    /// against the callee's form before they leave, the answer against the declared result.
    public func callAndWait(
        _ method: MethodContract, params: [String: JSON], context: CallContext?, timeoutMilliseconds: Int64 = 5000, replicaID: String? = nil
    ) throws(RPCError) -> JSON {
        let form = try method.outgoingForm(params)
        let answer = try callAndWait(method.name, params: .object(params), context: context, timeoutMilliseconds: timeoutMilliseconds, replicaID: replicaID)
        return try method.checkedAnswer(answer, of: form)
    }
}
