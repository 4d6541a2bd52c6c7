import FoundationEssentials
import Platform

/// What ties a stack's children to the process that launched them: a pipe whose read end is
/// every child's standard input and whose write end only this process holds. Both ends are
/// close-on-exec, so no child inherits the write end (a child's standard input is a copy made for
/// it). When this process ends, however it ends, the kernel closes the write end, and each child,
/// run with `LATCHKEY_STOP_ON_STDIN_CLOSE`, reads end of file and drains as on SIGTERM.
final class Lifeline: @unchecked Sendable {
    /// Given to each child as its standard input.
    let childEnd: Int32
    private let launcherEnd: Int32

    /// The variable that makes a child watch its standard input.
    static let environment = ["LATCHKEY_STOP_ON_STDIN_CLOSE": "true"]

    init() throws {
        // Atomically close-on-exec: a child spawned by another thread in between must not inherit either end.
        let pipe = try ChildPipe()
        childEnd = pipe.readEnd
        launcherEnd = pipe.writeEnd
    }

    deinit {
        close(childEnd)
        close(launcherEnd)
    }
}
