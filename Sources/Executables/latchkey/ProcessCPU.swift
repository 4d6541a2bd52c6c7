import Foundation
import Platform

/// CPU time a process has used (user + system, all its threads), from `/proc/PID/stat`: what a
/// bench divides by the operations of a run to say what one costs each process, a figure the
/// shared machine's noise moves far less than a rate.
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
}

/// CPU per operation of each process named, over one measured run.
struct CPUPerOperation {
    /// A process to watch; `pid` nil is the bench itself (the load generator).
    typealias Process = (name: String, pid: Int32?)

    private let processes: [Process]
    private let before: [Int64?]
    private var after: [Int64?]?

    /// Starts counting.
    init(_ processes: [Process]) {
        self.processes = processes
        before = processes.map { ProcessCPU.microseconds(pid: $0.pid) }
    }

    /// Stops counting (otherwise `finish` does).
    mutating func stop() {
        after = processes.map { ProcessCPU.microseconds(pid: $0.pid) }
    }

    /// Microseconds per answer for each process.
    func finish(operations: Int) -> [(name: String, microseconds: Double)] {
        guard operations > 0 else { return [] }
        let ended = after ?? processes.map { ProcessCPU.microseconds(pid: $0.pid) }
        return zip(processes, zip(before, ended)).compactMap { process, span in
            guard let started = span.0, let stopped = span.1 else { return nil }
            return (process.name, Double(stopped - started) / Double(operations))
        }
    }
}
