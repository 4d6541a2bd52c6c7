import Platform

/// Database files hold password hashes, e-mail addresses and phone numbers: readable and
/// writable by their owner only (0600), whatever the process's umask.
enum PrivateFile {
    /// Creates the database file at `path` empty and 0600 when it does not exist yet, and tightens
    /// an existing one (and its `-wal` / `-shm`) to 0600. SQLite gives the `-wal` and `-shm` files
    /// it creates later the database file's own mode. A file this process does not own keeps its
    /// mode: opening it then fails or succeeds as SQLite decides.
    static func prepareDatabase(at path: String) {
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { return }
        fchmod(fd, 0o600)
        close(fd)
        for companion in [path + "-wal", path + "-shm"] { chmod(companion, 0o600) }
    }
}
