import Foundation
import XCTest

/// Waits until `condition` holds, checking it every `pollMilliseconds`, for at most
/// `timeoutSeconds`; true if it held. The pause between checks is a polling interval, not
/// synchronisation: only the condition ends the wait early.
@discardableResult
public func eventually(timeoutSeconds: Double = 10, pollMilliseconds: UInt32 = 5, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(timeoutSeconds * 1_000_000_000)
    while true {
        if try condition() { return true }
        if DispatchTime.now().uptimeNanoseconds >= deadline { return false }
        usleep(pollMilliseconds * 1000)
    }
}

/// `eventually`, failing the test (with `what`) when the condition never held.
@discardableResult
public func waitUntil(
    _ what: String, timeoutSeconds: Double = 10, pollMilliseconds: UInt32 = 5, file: StaticString = #filePath, line: UInt = #line,
    _ condition: () throws -> Bool
) rethrows -> Bool {
    let held = try eventually(timeoutSeconds: timeoutSeconds, pollMilliseconds: pollMilliseconds, condition)
    if !held { XCTFail("timed out after \(timeoutSeconds) s waiting: \(what)", file: file, line: line) }
    return held
}

extension Process {
    /// Waits until the process has exited and been reaped, for at most `seconds`; false while it
    /// still runs then.
    public func exits(withinSeconds seconds: Double) -> Bool {
        guard eventually(timeoutSeconds: seconds, pollMilliseconds: 10, { !isRunning }) else { return false }
        waitUntilExit()
        return true
    }
}
