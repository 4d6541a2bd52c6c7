#if canImport(Darwin)
import Darwin
#else
import Glibc
#endif

/// The size in bytes of the file at `path`; 0 when there is none (yet) or it cannot be read.
public func fileSize(atPath path: String) -> Int {
    var status = stat()
    return stat(path, &status) == 0 ? Int(status.st_size) : 0
}
