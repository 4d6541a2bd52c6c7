// The platform's C library, re-exported: modules above Platform import Platform and never Glibc
// or Darwin, so the calls that differ between the two stay in this module's `#if` branches.
#if canImport(Darwin)
@_exported import Darwin
#elseif canImport(Glibc)
@_exported import Glibc
#endif
import FoundationEssentials

/// The C library's calls that types above Platform shadow with methods of the same name
/// (`close`, `read`, `write`, `connect`...): `LibC.close(fd)` names the C call on Linux and on
/// Darwin alike, where `Glibc.close` would tie the caller to one platform.
public enum LibC {
    /// Closes `fd`. A close that finds nothing open (`EBADF`) means the number was closed before:
    /// had it been reused in between, another owner's descriptor (libdispatch's epoll, a
    /// neighbour's socket) would have gone instead. Counted, so a test can prove a path closes once.
    @discardableResult public static func close(_ fd: Int32) -> Int32 {
        let status = closeCall(fd)
        if status != 0 && errno == EBADF { closesOfUnopenDescriptors.increment() }
        return status
    }

    /// How many closes in this process found their descriptor already closed.
    public static var unopenDescriptorCloses: Int { closesOfUnopenDescriptors.value }
    private static let closesOfUnopenDescriptors = LockedCount()

    /// Everything `fd` yields from its current offset until end of file (or an error), EINTR retried.
    public static func readToEnd(_ fd: Int32) -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { return bytes }
            bytes += chunk[..<count]
        }
    }

    @inline(__always) public static func read(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int { readCall(fd, buffer, count) }
    @inline(__always) public static func write(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int { writeCall(fd, buffer, count) }
    @inline(__always) public static func send(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ count: Int, _ flags: Int32) -> Int { sendCall(fd, buffer, count, flags) }
    @inline(__always) public static func recv(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int, _ flags: Int32) -> Int { recvCall(fd, buffer, count, flags) }
    @inline(__always) @discardableResult public static func connect(_ fd: Int32, _ address: UnsafePointer<sockaddr>?, _ length: socklen_t) -> Int32 { connectCall(fd, address, length) }
    @inline(__always) @discardableResult public static func shutdown(_ fd: Int32, _ how: Int32) -> Int32 { shutdownCall(fd, how) }
    @inline(__always) public static func poll(_ fds: UnsafeMutablePointer<pollfd>?, _ count: nfds_t, _ timeout: Int32) -> Int32 { pollCall(fds, count, timeout) }
    @inline(__always) @discardableResult public static func kill(_ pid: pid_t, _ signal: Int32) -> Int32 { killCall(pid, signal) }
}

private final class LockedCount: @unchecked Sendable {
    private let lock = Lock()
    private var count = 0
    func increment() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}

// At file scope the C names are the C library's; inside `LibC` they would be its own members.
@inline(__always) private func closeCall(_ fd: Int32) -> Int32 { close(fd) }
@inline(__always) private func readCall(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int { read(fd, buffer, count) }
@inline(__always) private func writeCall(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int { write(fd, buffer, count) }
@inline(__always) private func sendCall(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ count: Int, _ flags: Int32) -> Int { send(fd, buffer, count, flags) }
@inline(__always) private func recvCall(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int, _ flags: Int32) -> Int { recv(fd, buffer, count, flags) }
@inline(__always) private func connectCall(_ fd: Int32, _ address: UnsafePointer<sockaddr>?, _ length: socklen_t) -> Int32 { connect(fd, address, length) }
@inline(__always) private func shutdownCall(_ fd: Int32, _ how: Int32) -> Int32 { shutdown(fd, how) }
@inline(__always) private func pollCall(_ fds: UnsafeMutablePointer<pollfd>?, _ count: nfds_t, _ timeout: Int32) -> Int32 { poll(fds, count, timeout) }
@inline(__always) private func killCall(_ pid: pid_t, _ signal: Int32) -> Int32 { kill(pid, signal) }
