import XCTest

/// Hex literal for test vectors ("a2 01 02", spaces anywhere), failing loudly on typos.
public func hex(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> [UInt8] {
    let digits = Array(text.filter { !$0.isWhitespace }.utf8)
    func value(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
    var bytes: [UInt8] = []
    var index = 0
    while index + 1 < digits.count, let high = value(digits[index]), let low = value(digits[index + 1]) {
        bytes.append(high << 4 | low)
        index += 2
    }
    guard index == digits.count else {
        XCTFail("bad hex literal in test", file: file, line: line)
        return []
    }
    return bytes
}

public func utf8(_ text: String) -> [UInt8] { Array(text.utf8) }
