@testable import LineProtocol

/// SplitMix64: a tiny seeded generator so randomized tests are reproducible.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }
}

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
