/// A value written straight into an output buffer (a channel's, or a batch being built), with
/// `encoded()` for when it needs bytes of its own.
public protocol LineEncodable {
    func append(to buffer: inout [UInt8])
}

extension LineEncodable {
    public func encoded() -> [UInt8] {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(128)
        append(to: &buffer)
        return buffer
    }
}
