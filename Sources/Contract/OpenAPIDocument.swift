import LineProtocol

/// protocol/openapi.json: the gateway's HTTP door in OpenAPI 3.1, written from the same
/// declarations as the routers. Every public method is `POST /v1/<service>/<method>` with its
/// params as a JSON body (`session` as `Authorization: Bearer`), its result under `result` and
/// every error it may answer under `error`.
public enum OpenAPIDocument {
    public static func json() -> JSON {
        var paths: [String: JSON] = [:]
        for method in Contract.publicMethods {
            let parts = method.name.split(separator: ".")
            paths["/v1/\(parts[0])/\(parts[1])"] = ["post": operation(method)]
        }
        paths["/healthz"] = [
            "get": [
                "operationId": "healthz", "summary": "Liveness of the gateway and its services.", "tags": ["gateway"],
                "responses": [
                    "200": ["description": "serving", "content": ["application/json": ["schema": livenessSchema]]],
                    "503": ["description": "not serving", "content": ["application/json": ["schema": livenessSchema]]],
                ],
            ]
        ]
        return [
            "openapi": "3.1.0",
            "info": [
                "title": "Latchkey HTTP door", "version": "1",
                "description": .string(
                    "Generated from Sources/Contract; the line protocol's JSON-RPC methods are the same calls. See protocol/http.md."),
            ],
            "servers": [["url": "http://127.0.0.1:7480", "description": "`swift run latchkey up`"]],
            "paths": .object(paths),
            "components": [
                "securitySchemes": ["session": ["type": "http", "scheme": "bearer", "description": "A session token from a login."]],
                "schemas": ["Error": errorSchema],
            ],
        ]
    }

    static let livenessSchema: JSON = [
        "type": "object", "properties": ["status": ["type": "string", "enum": ["ok", "down"]]], "required": ["status"],
    ]

    static var errorSchema: JSON {
        [
            "type": "object", "required": ["error"], "additionalProperties": false,
            "properties": [
                "error": [
                    "type": "object", "required": ["code", "message", "data"],
                    "properties": [
                        "code": ["type": "integer"], "message": ["type": "string"],
                        "data": [
                            "type": "object", "required": ["reason"],
                            "properties": ["reason": ["type": "string", "enum": .array(Reason.allCases.map { .string($0.rawValue) } + doorReasons)]],
                        ],
                    ],
                ]
            ],
        ]
    }

    /// Reasons the HTTP door answers by itself, before any method runs.
    static let doorReasons: [JSON] = ["unsupported_media_type", "method_not_allowed", "payload_too_large", "request_timeout"]

    static func operation(_ method: MethodContract) -> JSON {
        let bodyParams = method.form.params.filter { $0.name != Fields.session.name }
        let session = method.form.params.first { $0.name == Fields.session.name }
        var operation: [String: JSON] = [
            "operationId": .string(method.name.replacingDots()), "summary": .string(method.summary),
            "tags": [.string(method.service)],
            "x-latchkey-access": .string(method.access.rawValue), "x-latchkey-retry": .string(method.retry.rawValue),
            "x-latchkey-rate-group": .string(method.group.rawValue),
            "requestBody": [
                "required": .bool(bodyParams.contains(where: \.isRequired)),
                "content": ["application/json": ["schema": paramsSchema(bodyParams)]],
            ],
            "responses": responses(method, takesSession: session != nil),
        ]
        if let session { operation["security"] = session.isRequired ? [["session": []]] : [[:], ["session": []]] }
        return .object(operation)
    }

    /// A null optional parameter counts as left out, so its shape takes null too.
    static func paramsSchema(_ params: [Member]) -> JSON {
        [
            "type": "object", "additionalProperties": false,
            "required": .array(params.filter(\.isRequired).map { .string($0.name) }),
            "properties": .object(Dictionary(uniqueKeysWithValues: params.map { member in
                (member.name, JSONSchema.of(member.isRequired || member.schema.isNullable ? member.schema : .nullable(member.schema)))
            })),
        ]
    }

    static func responses(_ method: MethodContract, takesSession: Bool) -> JSON {
        let result = method.form.result.map { Schema.object($0) }.map(JSONSchema.of) ?? ["type": "object"]
        var responses: [String: JSON] = [
            "200": [
                "description": "the method's result",
                "content": [
                    "application/json": [
                        "schema": ["type": "object", "required": ["result"], "additionalProperties": false, "properties": ["result": result]]
                    ]
                ],
            ]
        ]
        var reasons = method.form.errors + MethodContract.universalReasons
        if takesSession { reasons.append(.unauthenticated) }
        var byStatus: [Int: [String]] = [:]
        for reason in reasons where byStatus[reason.httpStatus]?.contains(reason.rawValue) != true {
            byStatus[reason.httpStatus, default: []].append(reason.rawValue)
        }
        // The door's own refusals: a body that is not JSON, too large, or too slow to arrive.
        byStatus[413, default: []].append("payload_too_large")
        byStatus[415, default: []].append("unsupported_media_type")
        for (status, names) in byStatus {
            responses[String(status)] = [
                "description": .string(names.joined(separator: ", ")),
                "content": ["application/json": ["schema": ["$ref": "#/components/schemas/Error"]]],
            ]
        }
        return .object(responses)
    }
}

extension String {
    func replacingDots() -> String { String(map { $0 == "." ? "_" : $0 }) }
}
