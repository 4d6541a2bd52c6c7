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

    /// `callAndWait`, awaited: the calling task gives its thread back until the answer comes.
    /// The call's time is the smaller of `timeoutMilliseconds` and what the caller has left.
    public func call(
        _ method: MethodContract, params: [String: JSON], context: CallContext?, timeoutMilliseconds: Int64 = 5000, replicaID: String? = nil
    ) async throws(RPCError) -> JSON {
        let form = try method.outgoingForm(params)
        let timeout = Self.timeout(timeoutMilliseconds, within: context)
        let outcome = await withCheckedContinuation { (continuation: CheckedContinuation<Result<JSON, RPCError>, Never>) in
            call(method.name, params: .object(params), meta: context?.forwardedMeta, timeoutMilliseconds: timeout, replicaID: replicaID) { outcome in
                continuation.resume(returning: outcome.result)
            }
        }
        return try method.checkedAnswer(try outcome.get(), of: form)
    }
}
