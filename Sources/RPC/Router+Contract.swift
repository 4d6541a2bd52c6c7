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

    /// `register(_:execution:_:)` for a handler that awaits other services.
    public func register(_ contract: MethodContract, _ handler: @escaping AsyncHandler) {
        let method = contract.name
        register(method) { params, context in
            let form = contract.form(withSession: params.has("session"))
            try form.check(params.members, method: method)
            #if DEBUG
            return try await Self.holdingToContract(form, method: method) { try await handler(params, context) }
            #else
            return try await handler(params, context)
            #endif
        }
    }

    #if DEBUG
    private static func holdingToContract(_ form: MethodContract.Form, method: String, _ body: () async throws -> JSON) async throws -> JSON {
        let answer: JSON
        do {
            answer = try await body()
        } catch {
            throw drift(error, form, method: method)
        }
        return try held(answer, form, method: method)
    }

    /// An answer outside the declaration becomes `internal`, naming what drifted, so tests see it.
    private static func holdingToContract(_ form: MethodContract.Form, method: String, _ body: () throws -> JSON) throws -> JSON {
        let answer: JSON
        do {
            answer = try body()
        } catch {
            throw drift(error, form, method: method)
        }
        return try held(answer, form, method: method)
    }

    /// `answer` when it has the declared result's members and shapes.
    private static func held(_ answer: JSON, _ form: MethodContract.Form, method: String) throws(RPCError) -> JSON {
        if let problem = form.resultProblem(answer) { throw RPCError(.internal, "contract drift: \(method): \(problem)") }
        return answer
    }

    /// The error to answer for `error`: itself, or `internal` when its reason is not declared.
    private static func drift(_ error: any Error, _ form: MethodContract.Form, method: String) -> any Error {
        let reason = (error as? RPCError)?.reason ?? (error as? RPCErrorConvertible)?.rpcError.reason
        if let reason, !form.errors.contains(reason), !MethodContract.universalReasons.contains(reason) {
            return RPCError(.internal, "contract drift: \(method) answered \(reason.rawValue), which it does not declare")
        }
        return error
    }
    #endif
}
