import Platform

/// One self-overwriting status line on stderr while long work runs, only when stderr is a
/// terminal: piped or logged output stays clean.
struct TerminalProgress {
    private let enabled = isatty(STDERR_FILENO) == 1

    func show(_ text: String) { write("\r\u{1B}[K\(text)") }

    func clear() { write("\r\u{1B}[K") }

    private func write(_ text: String) {
        guard enabled else { return }
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { LibC.write(STDERR_FILENO, $0.baseAddress, $0.count) }
    }
}
