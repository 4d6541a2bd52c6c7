import Foundation

/// Runs `body` as a task driven by the calling thread and returns its result: for tests that
/// call an async API from synchronous code, many threads at once (`concurrentPerform`). Each
/// call's task runs on its own caller's thread, so a body that blocks (a fake that waits for a
/// rival request) never starves the shared pool the others would need.
public func blocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let executor = CallingThreadExecutor()
    let outcome = ResultBox<Result<T, any Error>>()
    Task(executorPreference: executor) {
        do {
            outcome.set(.success(try await body()))
        } catch {
            outcome.set(.failure(error))
        }
    }
    executor.runJobs { outcome.value != nil }
    return try outcome.wait().get()
}

/// Jobs queued from any thread (a resumption comes from an event loop), run on the thread that
/// calls `runJobs`.
private final class CallingThreadExecutor: TaskExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    /// Runs jobs until `finished` holds with none queued.
    func runJobs(until finished: () -> Bool) {
        while true {
            condition.lock()
            while jobs.isEmpty && !finished() { condition.wait() }
            guard !jobs.isEmpty else {
                condition.unlock()
                return
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
