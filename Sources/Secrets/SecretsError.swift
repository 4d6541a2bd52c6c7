import COpenSSL

/// An error from the Secrets library. It carries a short static description of what failed
/// and the text of OpenSSL's per-thread error queue at that moment — never any secret input
/// (passwords, keys, salts or derived material are never put into it).
public struct SecretsError: Error, Sendable, CustomStringConvertible {
    /// What failed, e.g. "scrypt: parameters outside the accepted limits".
    public let context: String
    /// OpenSSL's error queue (ERR_get_error / ERR_error_string_n), oldest first; may be empty.
    public let openSSLErrors: [String]

    public init(_ context: String, openSSLErrors: [String] = []) {
        self.context = context
        self.openSSLErrors = openSSLErrors
    }

    public var description: String {
        openSSLErrors.isEmpty ? context : "\(context) (\(openSSLErrors.joined(separator: "; ")))"
    }

    /// An error for a failed OpenSSL call; drains (and so clears) this thread's error queue.
    static func openSSL(_ context: String) -> SecretsError {
        SecretsError(context, openSSLErrors: drainOpenSSLErrorQueue())
    }
}

/// Takes every pending error off this thread's OpenSSL error queue (keeps at most 16 texts).
/// Public for the TLS layer, so both OpenSSL wrappers drain the queue one way.
public func drainOpenSSLErrorQueue() -> [String] {
    var texts: [String] = []
    while true {
        let code = ERR_get_error()
        if code == 0 { break }
        guard texts.count < 16 else { continue }
        var buffer = [CChar](repeating: 0, count: 256)
        let text = buffer.withUnsafeMutableBufferPointer { buf -> String in
            ERR_error_string_n(code, buf.baseAddress, buf.count)
            return String(cString: buf.baseAddress!)
        }
        texts.append(text)
    }
    return texts
}

/// For failures that cannot happen short of a broken OpenSSL (allocation, a missing built-in
/// algorithm, a failing CSPRNG): continuing would be unsafe, so stop with the queue's text.
func fatalOpenSSL(_ context: String) -> Never {
    fatalError(SecretsError.openSSL(context).description)
}

/// Calls `body` with a pointer that is never nil (OpenSSL treats some NULL inputs specially,
/// even with a zero length) and the byte count.
@inline(__always)
func withBytes<R>(_ bytes: [UInt8], _ body: (UnsafePointer<UInt8>, Int) -> R) -> R {
    if bytes.isEmpty {
        var zero: UInt8 = 0
        return withUnsafePointer(to: &zero) { body($0, 0) }
    }
    return bytes.withUnsafeBufferPointer { body($0.baseAddress!, $0.count) }
}
