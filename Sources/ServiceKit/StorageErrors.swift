import LineProtocol
import RPC
import Storage

/// Storage failures as the wire sees them, in one place: conditions an operator must fix
/// (a full disk, a read-only file, a busy database) are `unavailable` with a plain message,
/// so a client retries later and nobody mistakes them for a bug; the rest stay `internal`.
/// Messages carry no bound values (Storage keeps them out).
extension StorageError: RPCErrorConvertible {
    public var rpcError: RPCError {
        switch self {
        case .full: return RPCError(.unavailable, "storage is full; nothing was changed", extra: ["detail": "storage_full"])
        case .readOnly: return RPCError(.unavailable, "storage is read-only; nothing was changed", extra: ["detail": "storage_read_only"])
        case .busy: return RPCError(.unavailable, "storage is busy; try again", extra: ["detail": "storage_busy"])
        case .io: return RPCError(.unavailable, "storage I/O error; nothing was changed", extra: ["detail": "storage_io"])
        case .unavailable: return RPCError(.unavailable, "storage is unreachable; try again", extra: ["detail": "storage_unreachable"])
        case .serializationFailure: return RPCError(.unavailable, "storage is busy; try again", extra: ["detail": "storage_busy"])
        default: return .internalError()
        }
    }
}
