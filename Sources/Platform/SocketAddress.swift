#if canImport(Darwin)
import Darwin
#else
import Glibc
#endif

/// An IPv4 or IPv6 address and port, resolved and ready for `bind`/`connect`.
public struct SocketAddress: Sendable, Hashable, CustomStringConvertible {
    /// Room for either family (a `sockaddr_in` fits in a `sockaddr_in6`): 28 bytes, where a
    /// `sockaddr_storage` took 128 in every value that carries an address (a forwarded call's
    /// outcome, its pinned replica).
    var storage: sockaddr_in6
    var length: socklen_t

    /// The first `length` bytes of the address at `raw` (IPv4 or IPv6, as the kernel or
    /// getaddrinfo wrote it).
    init(copying raw: UnsafeRawPointer, length: socklen_t) {
        var storage = sockaddr_in6()
        let count = min(Int(length), MemoryLayout<sockaddr_in6>.size)
        withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: UnsafeRawBufferPointer(start: raw, count: count)) }
        self.storage = storage
        self.length = socklen_t(count)
    }

    /// Equal when the description is: the family, the host's bytes and the port.
    public static func == (lhs: SocketAddress, rhs: SocketAddress) -> Bool {
        guard lhs.family == rhs.family, lhs.port == rhs.port else { return false }
        return lhs.withHostBytes { left in rhs.withHostBytes { right in left.elementsEqual(right) } }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(family)
        hasher.combine(port)
        withHostBytes { hasher.combine(bytes: $0) }
    }

    public var family: Int32 { Int32(storage.sin6_family) }

    /// The host's address bytes (16 for IPv6, 4 for IPv4), valid during `body` only.
    private func withHostBytes<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        var copy = storage
        return withUnsafeBytes(of: &copy) { raw in
            let (offset, count) =
                family == AF_INET6
                ? (MemoryLayout<sockaddr_in6>.offset(of: \.sin6_addr)!, 16) : (MemoryLayout<sockaddr_in>.offset(of: \.sin_addr)!, 4)
            return body(UnsafeRawBufferPointer(rebasing: raw[offset..<(offset + count)]))
        }
    }

    /// The address as the C calls take it (`bind`, `connect`), valid during `body` only.
    public func withSockaddr<Result, Failure: Error>(
        _ body: (UnsafePointer<sockaddr>, socklen_t) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        var copy = storage
        return try withUnsafePointer(to: &copy) { pointer throws(Failure) in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw throws(Failure) in try body(raw, length) }
        }
    }

    /// The host part alone (`127.0.0.1`, `::1`): the client address services see.
    public var host: String {
        var copy = storage
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        return withUnsafePointer(to: &copy) { pointer -> String in
            if family == AF_INET6 {
                pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { address in
                    var raw = address.pointee.sin6_addr
                    _ = inet_ntop(AF_INET6, &raw, &buffer, socklen_t(buffer.count))
                }
            } else {
                pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { address in
                    var raw = address.pointee.sin_addr
                    _ = inet_ntop(AF_INET, &raw, &buffer, socklen_t(buffer.count))
                }
            }
            return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
    }

    public var port: Int {
        var copy = storage
        return withUnsafePointer(to: &copy) { pointer -> Int in
            if family == AF_INET6 {
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin6_port)) }
            }
            return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin_port)) }
        }
    }

    public var description: String { family == AF_INET6 ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// Resolves `host` (a name or a literal) with getaddrinfo. Blocks: call it off the event loop.
    public static func resolve(host: String, port: Int) throws(SystemError) -> [SocketAddress] {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_family = AF_UNSPEC
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else { throw SystemError(call: "getaddrinfo(\(host))", errno: ENOENT) }
        defer { freeaddrinfo(first) }
        var addresses: [SocketAddress] = []
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let entry = cursor {
            if let raw = entry.pointee.ai_addr {
                let address = SocketAddress(copying: raw, length: entry.pointee.ai_addrlen)
                if !addresses.contains(address) { addresses.append(address) }
            }
            cursor = entry.pointee.ai_next
        }
        return addresses
    }
}

/// `host:port` as written in configuration (`127.0.0.1:7401`, `identity:7401`, `[::1]:7400`).
public struct Endpoint: Sendable, Hashable, CustomStringConvertible {
    public let host: String
    public let port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    public init?(_ text: String) {
        let trimmed = text.trimmingWhitespace()
        guard let colon = trimmed.lastIndex(of: ":") else { return nil }
        var host = String(trimmed[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty, let port = Int(trimmed[trimmed.index(after: colon)...]), (0...65535).contains(port) else { return nil }
        self.init(host: host, port: port)
    }

    /// A comma-separated replica list; nil when any member is malformed.
    public static func list(_ text: String) -> [Endpoint]? {
        let parts = text.split(separator: ",").map(String.init).filter { !$0.trimmingWhitespace().isEmpty }
        let endpoints = parts.compactMap(Endpoint.init)
        return endpoints.count == parts.count && !endpoints.isEmpty ? endpoints : nil
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
