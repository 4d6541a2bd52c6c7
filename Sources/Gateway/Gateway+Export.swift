import Contract
import LineProtocol
import Platform
import RPC

/// `identity.export` is the one method the gateway answers from several services: identity
/// answers its part (and checks the session's recent step-up again), then each other service's
/// internal `<service>.export_user` part is added under the service's name. A part that cannot
/// be had fails the whole export (`unavailable`, safe to retry): a user's copy of their data is
/// whole or not given.
extension Gateway {
    func composeExport(_ request: RPCRequest, userID: String, services: [String: PoolOnLoop], context: CallContext, finish: Finisher) {
        guard let identity = services["identity"] else {
            finish.fail(RPCError(.unavailable, "identity is not configured"))
            return
        }
        let end = ClosureEnd { [self] outcome in
            switch outcome {
            case .failure(let error): finish.fail(error)
            case .success(let identityPart): addParts(to: identityPart.decoded(), userID: userID, services: services, context: context, finish: finish)
            }
        }
        ForwardedCall(pool: identity, request: request, retrySafe: true, pinned: nil, context: context, settings: settings, end: end).start()
    }

    private func addParts(to identityPart: JSON, userID: String, services: [String: PoolOnLoop], context: CallContext, finish: Finisher) {
        guard case .object(let document) = identityPart, document["user_id"]?.stringValue == userID else {
            finish.fail(RPCError(.unavailable, "identity answered an unexpected export"))
            return
        }
        let gathered = ExportParts(document: document, expected: DataExportContract.parts.count, finish: finish)
        for method in DataExportContract.parts {
            let service = method.service
            guard let pool = services[service] else {
                gathered.add(service, .failure(RPCError(.unavailable, "\(service) is not configured")))
                continue
            }
            let part = RPCRequest(method: method.name, params: ["user_id": .string(userID)], id: nil)
            let end = ClosureEnd { outcome in gathered.add(service, outcome.map { $0.decoded() }) }
            ForwardedCall(pool: pool, request: part, retrySafe: true, pinned: nil, context: context, settings: settings, end: end).start()
        }
    }
}

/// The parts of one export as they come back, in any order; the last one finishes the answer.
private final class ExportParts: @unchecked Sendable {
    private let lock = Lock()
    private var document: [String: JSON]
    private var waiting: Int
    private var failure: RPCError?
    private let finish: Gateway.Finisher

    init(document: [String: JSON], expected: Int, finish: Gateway.Finisher) {
        self.document = document
        waiting = expected
        self.finish = finish
    }

    func add(_ service: String, _ outcome: Result<JSON, RPCError>) {
        lock.lock()
        switch outcome {
        case .success(let part): document[service] = part
        case .failure(let error): failure = failure ?? RPCError(.unavailable, "\(service)'s part of the export is unavailable (\(error.reasonText ?? "error")); try again")
        }
        waiting -= 1
        let done = waiting == 0
        let (result, failure) = (document, failure)
        lock.unlock()
        guard done else { return }
        if let failure { finish.fail(failure) } else { finish(.outcome(.success(.object(result)))) }
    }
}
