#if canImport(Darwin)
import Darwin
#else
import Glibc
#endif
import Platform
import Runtime

/// Ends a service with the process that launched it (`--stop-on-stdin-close`). The launcher
/// (`latchkey up`, `latchkey bench`, the end-to-end tests) gives its children the read end of a
/// pipe as standard input and keeps the only write end. However the launcher ends (Ctrl-C, a
/// closed terminal, a broken pipe, kill -9), the kernel closes that end, standard input reads end
/// of file, and the service drains as on SIGTERM instead of running on as an orphan that holds its
/// ports and files. Opt-in: under Docker or systemd standard input is not a launcher's pipe.
final class LauncherLifeline: EventHandler {
    private let loop: EventLoop
    private let launcherGone: () -> Void

    /// Watches standard input on `loop`; `launcherGone` runs once, on that loop's thread.
    init(loop: EventLoop, launcherGone: @escaping () -> Void) throws(SystemError) {
        self.loop = loop
        self.launcherGone = launcherGone
        // Nothing is ever written, but a read must not block the loop if something is.
        _ = fcntl(STDIN_FILENO, F_SETFL, fcntl(STDIN_FILENO, F_GETFL) | O_NONBLOCK)
        try loop.register(STDIN_FILENO, readable: true, writable: false, handler: self)
    }

    func handle(_ readiness: Readiness) {
        let count = withUnsafeTemporaryAllocation(byteCount: 256, alignment: 1) { buffer in
            read(STDIN_FILENO, buffer.baseAddress, buffer.count)
        }
        // Bytes are skipped; only the end (or a broken descriptor) means the launcher is gone.
        if count > 0 || (count < 0 && (errno == EINTR || errno == EAGAIN)) { return }
        // Once unregistered, the loop hands this descriptor no further event, even in this turn.
        loop.unregister(STDIN_FILENO)
        launcherGone()
    }
}
