/// The release every process names in its first log line, so a log says which build wrote it.
public enum LatchkeyVersion {
    public static let current = "0.9.0"
}
