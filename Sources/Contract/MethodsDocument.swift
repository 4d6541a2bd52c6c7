import LineProtocol

/// protocol/methods.json: every method's access, limits, params, result and errors, for
/// people and for tools. Written from the declarations; ContractTests fails when the committed
/// file differs (`LATCHKEY_REGENERATE_PROTOCOL=1 swift test --filter ContractTests` rewrites it).
public enum MethodsDocument {
    public static func json() -> JSON {
        var publicMethods: [String: JSON] = [:]
        var internalMethods: [String: JSON] = [:]
        for method in Contract.methods {
            if method.access.isPublic {
                publicMethods[method.name] = entry(method)
            } else {
                internalMethods[method.name] = entry(method)
            }
        }
        return [
            "description": .string(description),
            "universal_errors": .array(MethodContract.universalReasons.map { .string($0.rawValue) }),
            "public": .object(publicMethods),
            "internal": .object(internalMethods),
        ]
    }

    static let description = """
        Every method of Latchkey, generated from its declaration (Sources/Contract): service, who may call it \
        (open; session = a session that owes no factor; owes_factors_allowed = any live session, also one whose \
        required_factors is not empty; recent_step_up = aal 2 reached within identity's --step-up-window-s; \
        internal = other services only; operator = the latchkey tool only; neither is reachable through the gateway), \
        its rate-limit group and retry rule at the gateway, params (required, optional, and each one's shape), result \
        members (each one's shape; optional ones are present only sometimes) and the error reasons it may answer beside \
        universal_errors. A method with internal_form takes that form from other services, told apart by the absence \
        of session. Every method accepts `session` (the credential) and ignores it when it needs none; any other \
        parameter it does not take is invalid_params naming it. Paginated methods take `before` and answer `next`: an \
        opaque string cursor, sealed to the caller. The prose with transcripts is in the per-service pages.
        """

    static func entry(_ method: MethodContract) -> JSON {
        var members = form(method.form)
        members["service"] = .string(method.service)
        members["access"] = .string(method.access.rawValue)
        members["retry"] = .string(method.retry.rawValue)
        members["summary"] = .string(method.summary)
        if method.access.isPublic { members["group"] = .string(method.group.rawValue) }
        if method.routesByRequestID { members["routes_by_request_id"] = true }
        if let internalForm = method.internalForm { members["internal_form"] = .object(form(internalForm)) }
        return .object(members)
    }

    static func form(_ form: MethodContract.Form) -> [String: JSON] {
        var members: [String: JSON] = [
            "params": [
                "required": .array(form.params.filter(\.isRequired).map { .string($0.name) }),
                "optional": .array(form.params.filter { !$0.isRequired }.map { .string($0.name) }),
                "shapes": .object(Dictionary(uniqueKeysWithValues: form.params.map { ($0.name, JSONSchema.of($0.schema)) })),
            ],
            "errors": .array(form.errors.map { .string($0.rawValue) }),
        ]
        if let result = form.result {
            members["result"] = .array(result.map { .string($0.name) })
            members["result_shapes"] = .object(Dictionary(uniqueKeysWithValues: result.map { ($0.name, JSONSchema.of($0.schema)) }))
            members["result_optional"] = .array(result.filter { !$0.isRequired }.map { .string($0.name) })
        } else {
            members["result"] = .array([])
            members["result_open"] = true
        }
        return members
    }
}

/// A `Schema` in JSON Schema (draft 2020-12, as OpenAPI 3.1 uses it).
public enum JSONSchema {
    public static func of(_ schema: Schema) -> JSON {
        switch schema {
        case .string(let maxBytes, let values, let pattern, let format, let nonEmpty):
            var members: [String: JSON] = ["type": "string"]
            if nonEmpty { members["minLength"] = 1 }
            if let pattern { members["pattern"] = .string(pattern) }
            if let format { members["format"] = .string(format) }
            // JSON Schema counts characters; a limit in bytes is at least as many characters.
            if let maxBytes { members["maxLength"] = .int(Int64(maxBytes)) }
            if !values.isEmpty { members["enum"] = .array(values.map(JSON.string)) }
            return .object(members)
        case .integer(let minimum, let maximum):
            var members: [String: JSON] = ["type": "integer"]
            if let minimum { members["minimum"] = .int(minimum) }
            if let maximum { members["maximum"] = .int(maximum) }
            return .object(members)
        case .boolean:
            return ["type": "boolean"]
        case .object(let declared):
            return [
                "type": "object",
                "properties": .object(Dictionary(uniqueKeysWithValues: declared.map { ($0.name, of($0.schema)) })),
                "required": .array(declared.filter(\.isRequired).map { .string($0.name) }),
                "additionalProperties": false,
            ]
        case .map(let inner):
            return ["type": "object", "additionalProperties": of(inner)]
        case .anyObject:
            return ["type": "object"]
        case .array(let element):
            return ["type": "array", "items": of(element)]
        case .nullable(let inner):
            guard case .object(var members) = of(inner), let type = members["type"] else { return ["anyOf": [of(inner), ["type": "null"]]] }
            members["type"] = [type, "null"]
            // An enum lists every value the member takes: null among them.
            if case .array(let values)? = members["enum"] { members["enum"] = .array(values + [.null]) }
            return .object(members)
        case .any:
            return [:]
        }
    }
}
