import Foundation
import Platform

/// CPU time a process has used (user + system, all its threads), from `/proc/PID/stat`: what a
/// bench divides by the answers of a run to say what one answer costs each process, a figure the
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

/// CPU per answer of each process named, over one measured run.
struct CPUPerAnswer {
    private let pids: [(name: String, pid: Int32?)]
    private let before: [Int64?]

    /// Starts counting for `pids` (nil: the bench itself, the load generator).
    init(_ pids: [(name: String, pid: Int32?)]) {
        self.pids = pids
        before = pids.map { ProcessCPU.microseconds(pid: $0.pid) }
    }

    /// Microseconds per answer for each process, over every answer the run received.
    func finish(answers: Int) -> [(name: String, microseconds: Double)] {
        guard answers > 0 else { return [] }
        return zip(pids, before).compactMap { process, started in
            guard let started, let now = ProcessCPU.microseconds(pid: process.pid) else { return nil }
            return (process.name, Double(now - started) / Double(answers))
        }
    }
}
