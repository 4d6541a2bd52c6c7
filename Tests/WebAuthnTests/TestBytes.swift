import Secrets
import XCTest

/// Hex literal for test vectors ("a2 01 02"), failing loudly on typos.
func hex(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> [UInt8] {
    guard let bytes = Hex.decode(text.filter { !$0.isWhitespace }) else {
        XCTFail("bad hex literal in test", file: file, line: line)
        return []
    }
    return bytes
}

func utf8(_ text: String) -> [UInt8] { Array(text.utf8) }
