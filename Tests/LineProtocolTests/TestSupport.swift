@testable import LineProtocol
import TestSupport

func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

func parse(_ text: String, limits: JSONLimits = .default) throws(JSONParseError) -> JSON {
    try JSONParser.parse(bytes(text), limits: limits)
}

func parseError(_ input: [UInt8], limits: JSONLimits = .default) -> JSONParseError? {
    do throws(JSONParseError) {
        _ = try JSONParser.parse(input, limits: limits)
        return nil
    } catch {
        return error
    }
}

func parseError(_ text: String, limits: JSONLimits = .default) -> JSONParseError? {
    parseError(bytes(text), limits: limits)
}
