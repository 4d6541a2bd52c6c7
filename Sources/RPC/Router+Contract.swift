import Contract
import LineProtocol

extension Router {
    /// Registers the handler of a declared method: its parameters are checked against the
    /// declaration (names, presence, shapes) before `handler` runs; debug builds also hold every
    /// answer and error reason to it, so a handler cannot drift from what the contract says.
    public func register(_ contract: MethodContract, execution: Execution = .pool, _ handler: @escaping Handler) {
        let method = contract.name
        register(method, execution: execution) { params, context in
            let form = contract.form(withSession: params.has("session"))
            try form.check(params.members, method: method)
            #if DEBUG
            return try Self.holdingToContract(form, method: method) { try handler(params, context) }
            #else
            return try handler(params, context)
            #endif
        }
    }

    #if DEBUG
    /// An answer outside the declaration becomes `internal`, naming what drifted, so tests see it.
    private static func holdingToContract(_ form: MethodContract.Form, method: String, _ body: () throws -> JSON) throws -> JSON {
        let answer: JSON
        do {
            answer = try body()
        } catch {
            let reason = (error as? RPCError)?.reason ?? (error as? RPCErrorConvertible)?.rpcError.reason
            if let reason, !form.errors.contains(reason), !MethodContract.universalReasons.contains(reason) {
                throw RPCError(.internal, "contract drift: \(method) answered \(reason.rawValue), which it does not declare")
            }
            throw error
        }
        if let problem = form.resultProblem(answer) { throw RPCError(.internal, "contract drift: \(method): \(problem)") }
        return answer
    }
    #endif
}
