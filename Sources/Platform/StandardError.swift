/// Writes to the process's standard error in full (a message is never cut by a short write).
public enum StandardError {
    public static func write(_ text: String) {
        write(Array(text.utf8))
    }

    public static func write(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { LibC.write(2, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                return
            }
            offset += written
        }
    }
}
