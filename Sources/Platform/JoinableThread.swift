import CLinux
import FoundationEssentials
#if canImport(Darwin)
import Darwin
#else
import Glibc
#endif

/// A POSIX thread that can be joined. Foundation's `Thread` (which the server cannot use: it
/// builds on FoundationEssentials) is detached: a process cannot
/// wait for one to end, so `exit` ran the C library's and OpenSSL's at-exit cleanup while
/// such threads were still ending (and running OpenSSL's per-thread destructor): a double
/// free or a use after free. Every thread a Latchkey process starts is one of these and is
/// joined before the process exits.
public final class JoinableThread: @unchecked Sendable {
    private let handle: pthread_t
    private var joined = false

    /// Starts `body` on a new thread named `name` (the kernel keeps the first 15 bytes).
    public init(name: String, stackSizeBytes: Int = 1 << 20, _ body: @escaping @Sendable () -> Void) {
        let start = ThreadStart(name: name, body: body)
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setstacksize(&attributes, stackSizeBytes)
        var handle = pthread_t()
        let result = pthread_create(&handle, &attributes, { argument in
            let start = Unmanaged<ThreadStart>.fromOpaque(argument!).takeRetainedValue()
            // Names this POSIX thread for debuggers and `top -H`; the kernel takes at most 15 bytes.
            _ = lk_name_this_thread(String(decoding: start.name.utf8.prefix(15), as: UTF8.self))
            start.body()
            return nil
        }, Unmanaged.passRetained(start).toOpaque())
        // Failing to start a thread at setup leaves the process unable to serve: stop loudly.
        precondition(result == 0, "pthread_create failed: errno \(result)")
        self.handle = handle
    }

    /// A thread released without a join (a pool a test let go of) is detached, so its resources
    /// are freed when it ends; processes join theirs explicitly before they exit.
    deinit {
        if !joined { pthread_detach(handle) }
    }

    /// Waits for the thread to end. Once only, and never from the thread itself.
    public func join() {
        precondition(!joined, "thread joined twice")
        precondition(pthread_equal(handle, pthread_self()) == 0, "a thread cannot join itself")
        joined = true
        let result = pthread_join(handle, nil)
        precondition(result == 0, "pthread_join failed: errno \(result)")
    }
}

private final class ThreadStart {
    let name: String
    let body: @Sendable () -> Void

    public init(name: String, body: @escaping @Sendable () -> Void) {
        self.name = name
        self.body = body
    }
}
