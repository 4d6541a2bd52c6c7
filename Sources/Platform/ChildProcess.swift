import CLinux
#if canImport(Darwin)
import Darwin
#else
import Glibc
#endif

/// A child process started with `posix_spawn`: what the stack launcher and the benches need of
/// Foundation's `Process`, which the server cannot use (it builds on FoundationEssentials, so that
/// the binary carries no ICU). The child starts with every signal unblocked and SIGPIPE, SIGTERM
/// and SIGINT at their defaults, whatever this process blocks or ignores.
public final class ChildProcess: @unchecked Sendable {
    /// Where one of the child's standard streams goes.
    public enum Stream: Sendable {
        case inherit
        case null
        /// A descriptor of this process, duplicated for the child (the caller keeps its own).
        case descriptor(Int32)
    }

    public enum TerminationReason: Sendable {
        case exit
        case uncaughtSignal
    }

    public let processIdentifier: Int32
    private let lock = Lock()
    private var waitStatus: Int32?

    /// Starts `executable` with `arguments` (not counting argv[0], which is `executable`) and
    /// exactly `environment`.
    public init(
        executable: String, arguments: [String], environment: [String: String],
        standardInput: Stream = .inherit, standardOutput: Stream = .inherit, standardError: Stream = .inherit
    ) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (stream, target) in [(standardInput, Int32(0)), (standardOutput, 1), (standardError, 2)] {
            switch stream {
            case .inherit: break
            case .null: posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0)
            case .descriptor(let descriptor): posix_spawn_file_actions_adddup2(&actions, descriptor, target)
            }
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGPIPE, SIGTERM, SIGINT] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard result == 0 else { throw SystemError(call: "posix_spawn \(executable)", errno: result) }
        processIdentifier = pid
    }

    /// False once the child has ended (and been reaped here).
    public var isRunning: Bool {
        lock.withLock {
            if waitStatus != nil { return false }
            var status: Int32 = 0
            let result = waitpid(processIdentifier, &status, WNOHANG)
            if result == processIdentifier { waitStatus = status }
            return waitStatus == nil
        }
    }

    /// Returns once the child has ended. Several threads may wait at once: each sleeps in
    /// `waitid` without reaping, and `isRunning` reaps the child once.
    public func waitUntilExit() {
        while isRunning {
            var info = siginfo_t()
            if waitid(P_PID, id_t(processIdentifier), &info, WEXITED | WNOWAIT) == -1 {
                if errno == EINTR { continue }
                // Reaped by another waiter between the two calls, or by someone else entirely.
                lock.withLock { if waitStatus == nil { waitStatus = 0x7f00 } }
            }
        }
    }

    /// The exit status, or the number of the signal that ended the child. Valid once it ended.
    public var terminationStatus: Int32 {
        let status = lock.withLock { waitStatus } ?? 0
        return status & 0x7f == 0 ? (status >> 8) & 0xff : status & 0x7f
    }

    public var terminationReason: TerminationReason {
        (lock.withLock { waitStatus } ?? 0) & 0x7f == 0 ? .exit : .uncaughtSignal
    }

    /// Sends SIGTERM (a child that already ended and was reaped gets nothing).
    public func terminate() {
        if isRunning { kill(processIdentifier, SIGTERM) }
    }
}

/// A pipe between this process and a child: both ends close-on-exec, so a child gets only the
/// end it is given as a standard stream (duplicated for it), and the caller closes its ends.
public struct ChildPipe: Sendable {
    public let readEnd: Int32
    public let writeEnd: Int32

    public init() throws {
        var ends: [Int32] = [-1, -1]
        #if canImport(Darwin)
        guard pipe(&ends) == 0 else { throw SystemError(call: "pipe", errno: errno) }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        #else
        guard lk_pipe_cloexec(&ends) == 0 else { throw SystemError(call: "pipe2", errno: errno) }
        #endif
        readEnd = ends[0]
        writeEnd = ends[1]
    }

    /// Everything written to the pipe until every write end is closed.
    public func readToEnd() -> [UInt8] { LibC.readToEnd(readEnd) }
}
