import FoundationEssentials
import Platform

/// What a process has used so far, from `/proc`: CPU time (user + system, all its threads, from
/// `/proc/PID/stat`), context switches (voluntary and not, summed over `/proc/PID/task/*/status`)
/// and writes (`/proc/PID/io`). A bench divides them by the operations of a run to say what one
/// costs each process: figures the shared machine's noise moves far less than a rate. The switches
/// count the hand-offs between threads and processes that an operation's hops cost; the writes
/// what its commits put through the file system, a figure the host's speed does not move at all.
enum ProcessCPU {
    /// Microseconds of CPU used so far by `pid` (this process when nil), or nil when unreadable.
    static func microseconds(pid: Int32?) -> Int64? {
        let path = pid.map { "/proc/\($0)/stat" } ?? "/proc/self/stat"
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        return microseconds(statLine: text)
    }

    /// Fields 14 and 15 (`utime`, `stime`, in clock ticks), counted after the command name,
    /// which is in parentheses and may hold spaces.
    static func microseconds(statLine: String) -> Int64? {
        guard let close = statLine.lastIndex(of: ")") else { return nil }
        let fields = statLine[statLine.index(after: close)...].split(separator: " ")
        // fields[0] is field 3 (the state).
        guard fields.count > 12, let user = Int64(fields[11]), let system = Int64(fields[12]) else { return nil }
        return (user + system) * 1_000_000 / Int64(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// Context switches of `pid`'s threads, or nil when unreadable. Another process is read from
    /// the threads it has now, so a thread that ended takes its count with it (the services'
    /// threads live as long as the process); this one (nil) from `getrusage`, which keeps the
    /// counts of the bench's own threads that ended.
    static func contextSwitches(pid: Int32?) -> Int64? {
        guard let pid else {
            var usage = rusage()
            guard getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage) == 0 else { return nil }
            return Int64(usage.ru_nvcsw + usage.ru_nivcsw)
        }
        let directory = "/proc/\(pid)/task"
        guard let threads = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return nil }
        var total: Int64 = 0
        for thread in threads {
            // A thread that ended since the listing is skipped.
            guard let text = try? String(contentsOfFile: "\(directory)/\(thread)/status", encoding: .utf8) else { continue }
            total += contextSwitches(status: text) ?? 0
        }
        return total
    }

    /// Bytes passed to `write`-family calls and the number of those calls so far (`wchar` and
    /// `syscw`, all threads): files, pipes and eventfds, but not sockets, which the project
    /// writes with `send`. Nil when unreadable.
    static func writes(pid: Int32?) -> Writes? {
        let path = pid.map { "/proc/\($0)/io" } ?? "/proc/self/io"
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        return writes(io: text)
    }

    struct Writes {
        let bytes: Int64
        let calls: Int64
    }

    /// `wchar` and `syscw` of one `io` file; nil when either is missing.
    static func writes(io: String) -> Writes? {
        let values = numbers(io)
        guard let bytes = values["wchar"], let calls = values["syscw"] else { return nil }
        return Writes(bytes: bytes, calls: calls)
    }

    /// `voluntary_ctxt_switches` + `nonvoluntary_ctxt_switches` of one `status` file; nil when either is missing.
    static func contextSwitches(status: String) -> Int64? {
        let values = numbers(status)
        guard let voluntary = values["voluntary_ctxt_switches"], let involuntary = values["nonvoluntary_ctxt_switches"] else { return nil }
        return voluntary + involuntary
    }

    /// The whole-number values of a `/proc` file of `name: value` lines, by name.
    private static func numbers(_ text: String) -> [Substring: Int64] {
        var values: [Substring: Int64] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 1)
            guard parts.count == 2, let value = Int64(parts[1].trimmingWhitespace()) else { continue }
            values[parts[0]] = value
        }
        return values
    }
}

/// What one operation cost one process over a measured run.
struct ProcessCost: Sendable {
    let name: String
    let cpuMicroseconds: Double
    /// Nil when the process's threads could not be read.
    let contextSwitches: Double?
    /// Bytes passed to `write` calls and those calls, per operation (see `ProcessCPU.writes`); nil when unreadable.
    let writes: (bytes: Double, calls: Double)?
}

/// The cost per operation of each process named, over one measured run.
struct CostPerOperation {
    /// A process to watch; `pid` nil is the bench itself (the load generator).
    typealias Process = (name: String, pid: Int32?)

    private struct Reading {
        let cpu: Int64?
        let switches: Int64?
        let writes: ProcessCPU.Writes?

        init(_ pid: Int32?) {
            cpu = ProcessCPU.microseconds(pid: pid)
            switches = ProcessCPU.contextSwitches(pid: pid)
            writes = ProcessCPU.writes(pid: pid)
        }
    }

    private let processes: [Process]
    private let before: [Reading]
    private var after: [Reading]?

    /// Starts counting.
    init(_ processes: [Process]) {
        self.processes = processes
        before = processes.map { Reading($0.pid) }
    }

    /// Stops counting (otherwise `finish` does).
    mutating func stop() {
        after = processes.map { Reading($0.pid) }
    }

    /// Each process's cost per operation; a process whose CPU could not be read is left out.
    func finish(operations: Int) -> [ProcessCost] {
        guard operations > 0 else { return [] }
        let ended = after ?? processes.map { Reading($0.pid) }
        return zip(processes, zip(before, ended)).compactMap { process, span in
            guard let started = span.0.cpu, let stopped = span.1.cpu else { return nil }
            let count = Double(operations)
            var switches: Double?
            if let first = span.0.switches, let last = span.1.switches { switches = Double(last - first) / count }
            var writes: (bytes: Double, calls: Double)?
            if let first = span.0.writes, let last = span.1.writes {
                writes = (Double(last.bytes - first.bytes) / count, Double(last.calls - first.calls) / count)
            }
            return ProcessCost(
                name: process.name, cpuMicroseconds: Double(stopped - started) / count, contextSwitches: switches, writes: writes)
        }
    }
}
