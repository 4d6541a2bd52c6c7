import FoundationEssentials
import Glibc
import Platform

/// The bench's data directories: `latchkey-bench-PID-...` in the temporary directory, removed when
/// the bench ends. A bench killed before that (Ctrl-C, kill -9, a closed pipe) leaves its directory
/// behind, and a `long` run's preloaded history is hundreds of megabytes, so each bench removes the
/// leftovers of benches whose process is gone. It keeps any with a file changed in the last ten
/// minutes: a bench in another PID namespace that shares the directory looks gone but is still
/// writing its logs.
enum BenchScratch {
    static let prefix = "latchkey-bench-"
    static let quietSecondsBeforeRemoval: TimeInterval = 600

    /// `TMPDIR` (or /tmp), with a slash at the end.
    static var temporaryDirectory: String {
        let directory = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        return directory.hasSuffix("/") ? directory : directory + "/"
    }

    /// A fresh directory's path for this process (not yet created).
    static func newDirectory(eventLoops: Int) -> String {
        temporaryDirectory + "\(prefix)\(getpid())-\(eventLoops)-\(UInt32.random(in: 0...UInt32.max))"
    }

    /// Removes the directories in `parent` left by benches that ended without cleaning up.
    static func removeLeftovers(in parent: String = temporaryDirectory) {
        let files = FileManager.default
        for name in (try? files.contentsOfDirectory(atPath: parent)) ?? [] where name.hasPrefix(prefix) {
            guard let pid = Int32(name.dropFirst(prefix.count).prefix { $0 != "-" }), !isRunning(pid) else { continue }
            let path = parent.appendingPathComponent(name)
            guard let changed = lastChange(under: path), Date().timeIntervalSince(changed) > quietSecondsBeforeRemoval else { continue }
            try? files.removeItem(atPath: path)
        }
    }

    private static func isRunning(_ pid: Int32) -> Bool {
        pid > 0 && (kill(pid, 0) == 0 || errno != ESRCH)
    }

    /// The newest modification time of the directory and everything in it.
    private static func lastChange(under path: String) -> Date? {
        let files = FileManager.default
        var newest = (try? files.attributesOfItem(atPath: path))?[.modificationDate] as? Date
        for entry in (try? files.subpathsOfDirectory(atPath: path)) ?? [] {
            guard let date = (try? files.attributesOfItem(atPath: path.appendingPathComponent(entry)))?[.modificationDate] as? Date else {
                continue
            }
            if newest.map({ date > $0 }) ?? true { newest = date }
        }
        return newest
    }
}
