import LineProtocol

extension MethodContract.Form {
    /// Checks a call's parameters before anything else runs (no session lookup, no work): an
    /// unknown name is `invalid_params` naming it, with the names the form takes in
    /// `data.accepted`, so a misspelt `sms_verifcation` is never silently ignored; each required
    /// one must be present and not null; each given one must have its declared shape. `session`
    /// is the credential every door may attach (the HTTP door copies `Authorization: Bearer`
    /// into it), so a form that takes none ignores it, and a missing one is the session
    /// check's to answer (`unauthenticated`).
    public func check(_ members: [String: JSON], method: String) throws(RPCError) {
        // A few names each: looked through in place, no set built per request. The smallest
        // unknown name is named, so that the answer does not depend on hashing order.
        if let first = members.keys.filter({ name in name != Fields.session.name && !params.contains { $0.name == name } }).min() {
            let listed: JSON = .array(acceptedNames.map(JSON.string))
            // A name is echoed only when it looks like one: a key may be anything a client typed.
            guard Self.isPrintableName(first) else {
                throw RPCError(.invalidParams, "\(method) was given a parameter it does not take", extra: ["accepted": listed])
            }
            throw RPCError(.invalidParams, "\(first) is not a parameter of \(method)", extra: ["field": .string(first), "accepted": listed])
        }
        // Every name before any value: a missing parameter is named before a malformed one.
        if let missing = params.first(where: { member in
            member.isRequired && member.name != Fields.session.name && !member.schema.isNullable && (members[member.name] ?? .null) == .null
        }) {
            throw RPCError.invalidParams("\(missing.name) is required", field: missing.name)
        }
        for member in params {
            guard let value = members[member.name], value != .null else { continue }
            if let problem = member.schema.problem(with: value) {
                throw RPCError.invalidParams("\(member.name) \(problem)", field: member.name)
            }
        }
    }

    /// Every parameter name, sorted (what `data.accepted` lists).
    public var acceptedNames: [String] { params.map(\.name).sorted() }

    /// Why an answer does not match the declared result, or nil when it does.
    public func resultProblem(_ answer: JSON) -> String? {
        guard let result else { return answer.objectValue == nil ? "the answer is not an object" : nil }
        return Schema.object(result).problem(with: answer).map { "the answer \($0)" }
    }

    private static func isPrintableName(_ name: String) -> Bool {
        (1...64).contains(name.utf8.count) && name.utf8.allSatisfy {
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".")
        }
    }
}

extension Schema {
    var isNullable: Bool {
        if case .nullable = self { return true }
        return false
    }

    /// What is wrong with `value` for this shape, said after the member's name ("must be a
    /// string"), or nil. Never quotes the value: it may be a secret.
    func problem(with value: JSON) -> String? {
        switch (self, value) {
        case (.any, _): return nil
        case (.nullable, .null): return nil
        case (.nullable(let inner), _): return inner.problem(with: value)
        case (.string(let maxBytes, _, _, _, let nonEmpty), .string(let text)):
            if let maxBytes, text.utf8.count > maxBytes { return "is longer than \(maxBytes) bytes" }
            if nonEmpty, text.isEmpty { return "must not be empty" }
            return nil
        case (.string, _): return "must be a string"
        case (.integer(let minimum, let maximum), .int(let number)):
            switch (minimum, maximum) {
            case (let low?, let high?) where !(low...high).contains(number): return "must be between \(low) and \(high)"
            case (let low?, nil) where number < low: return "must be at least \(low)"
            case (nil, let high?) where number > high: return "must be at most \(high)"
            default: return nil
            }
        case (.integer, _): return "must be an integer"
        case (.boolean, .bool): return nil
        case (.boolean, _): return "must be true or false"
        case (.anyObject, .object): return nil
        case (.map(let inner), .object(let members)):
            for (name, member) in members.sorted(by: { $0.key < $1.key }) {
                if let problem = inner.problem(with: member) { return ".\(name) \(problem)" }
            }
            return nil
        case (.object(let declared), .object(let members)):
            if let extra = members.keys.filter({ name in !declared.contains { $0.name == name } }).min() {
                return "has a member it does not declare (\(extra))"
            }
            for member in declared {
                guard let given = members[member.name] else {
                    if member.isRequired { return "lacks \(member.name)" }
                    continue
                }
                if let problem = member.schema.problem(with: given) { return ".\(member.name) \(problem)" }
            }
            return nil
        case (.anyObject, _), (.map, _), (.object, _): return "must be an object"
        case (.array(let element), .array(let items)):
            for (index, item) in items.enumerated() {
                if let problem = element.problem(with: item) { return "[\(index)] \(problem)" }
            }
            return nil
        case (.array, _): return "must be an array"
        }
    }
}
