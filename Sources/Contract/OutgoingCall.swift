import LineProtocol

extension MethodContract {
    /// Checks params a service is about to send to this method against the form the callee
    /// takes (the internal one when no session is given) and answers that form. A caller that
    /// drifted from the declaration fails here as `internal`, naming the drift, instead of
    /// reaching the callee and coming back as `invalid_params` on someone else's request.
    public func outgoingForm(_ params: [String: JSON]) throws(RPCError) -> Form {
        let chosen = form(withSession: params["session"] != nil)
        do {
            try chosen.check(params, method: name)
        } catch {
            throw RPCError(.internal, "call drift: \(name): \(error.message)")
        }
        return chosen
    }

    /// The callee's answer, checked in debug builds against the declared result, so a caller
    /// never parses a shape the declaration does not promise.
    public func checkedAnswer(_ answer: JSON, of form: Form) throws(RPCError) -> JSON {
        #if DEBUG
        if let problem = form.resultProblem(answer) { throw RPCError(.internal, "contract drift: \(name) answered: \(problem)") }
        #endif
        return answer
    }
}
