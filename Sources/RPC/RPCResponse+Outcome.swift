import LineProtocol

extension RPCResponse {
    public init(id: JSON, outcome: Result<JSON, RPCError>) {
        switch outcome {
        case .success(let result): self.init(id: id, result: result)
        case .failure(let error): self.init(id: id, error: error)
        }
    }
}
