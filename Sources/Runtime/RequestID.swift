/// A request's id: one a caller vouched for, or one issued here as a process-unique prefix and a
/// number. An issued id is spelled out only when something reads it (a log line, a forwarded
/// call, the access log): the requests nobody logs one by one (pings) never build the string.
public struct RequestID: Sendable, Equatable, CustomStringConvertible {
    private let given: String?
    private let prefix: String
    private let number: UInt64

    public init(_ given: String) {
        self.given = given
        prefix = ""
        number = 0
    }

    public init(prefix: String, number: UInt64) {
        given = nil
        self.prefix = prefix
        self.number = number
    }

    public var description: String { given ?? prefix + String(number) }
}
