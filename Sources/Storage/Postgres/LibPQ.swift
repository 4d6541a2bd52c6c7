import CPostgres
import Platform

/// libpq's functions, found with `dlopen` the first time a PostgreSQL URL is opened instead of
/// linked into every executable. A process in the default SQLite mode then never maps libpq and
/// what it pulls in (GnuTLS, Kerberos, LDAP, SASL, p11-kit: about 3 MB resident in each process,
/// measured). The header still gives the types, so every signature below is checked against it;
/// calling a `PQ...` function directly fails at link time, since nothing links libpq.
struct LibPQ: @unchecked Sendable {
    typealias Connection = OpaquePointer
    typealias Result = OpaquePointer
    typealias CStringArray = UnsafePointer<UnsafePointer<CChar>?>

    let connectdbParams: @convention(c) (CStringArray?, CStringArray?, Int32) -> Connection?
    let status: @convention(c) (Connection?) -> ConnStatusType
    let finish: @convention(c) (Connection?) -> Void
    let errorMessage: @convention(c) (Connection?) -> UnsafeMutablePointer<CChar>?
    let setNoticeProcessor: @convention(c) (Connection?, PQnoticeProcessor?, UnsafeMutableRawPointer?) -> PQnoticeProcessor?
    let exec: @convention(c) (Connection?, UnsafePointer<CChar>?) -> Result?
    let execParams: @convention(c) (
        Connection?, UnsafePointer<CChar>?, Int32, UnsafePointer<Oid>?, CStringArray?, UnsafePointer<Int32>?, UnsafePointer<Int32>?, Int32
    ) -> Result?
    let resultStatus: @convention(c) (Result?) -> ExecStatusType
    let resultErrorField: @convention(c) (Result?, Int32) -> UnsafeMutablePointer<CChar>?
    let ntuples: @convention(c) (Result?) -> Int32
    let nfields: @convention(c) (Result?) -> Int32
    let fname: @convention(c) (Result?, Int32) -> UnsafeMutablePointer<CChar>?
    let ftype: @convention(c) (Result?, Int32) -> Oid
    let cmdTuples: @convention(c) (Result?) -> UnsafeMutablePointer<CChar>?
    let getvalue: @convention(c) (Result?, Int32, Int32) -> UnsafeMutablePointer<CChar>?
    let getlength: @convention(c) (Result?, Int32, Int32) -> Int32
    let getisnull: @convention(c) (Result?, Int32, Int32) -> Int32
    let clear: @convention(c) (Result?) -> Void

    /// The library's soname: Debian's libpq5 package (the run image installs it).
    static let libraryName = "libpq.so.5"

    /// Loaded once per process, on first use; the library stays loaded until exit.
    static func shared() throws(StorageError) -> LibPQ { try loaded.get() }

    private static let loaded = Swift.Result<LibPQ, StorageError> { () throws(StorageError) in try LibPQ(library: libraryName) }

    /// Opens `library` and finds every function, or throws `unavailable` naming what is missing.
    init(library: String) throws(StorageError) {
        guard let handle = dlopen(library, RTLD_NOW | RTLD_LOCAL) else {
            let reason = dlerror().map { String(cString: $0) } ?? "not found"
            throw .unavailable("PostgreSQL needs libpq (\(library), Debian package libpq5): \(reason)")
        }
        // Each function's type is the property's it is assigned to, checked against the header's.
        func find<Function>(_ name: String) throws(StorageError) -> Function {
            guard let symbol = dlsym(handle, name) else { throw .unavailable("\(library) has no \(name)") }
            return unsafeBitCast(symbol, to: Function.self)
        }
        connectdbParams = try find("PQconnectdbParams")
        status = try find("PQstatus")
        finish = try find("PQfinish")
        errorMessage = try find("PQerrorMessage")
        setNoticeProcessor = try find("PQsetNoticeProcessor")
        exec = try find("PQexec")
        execParams = try find("PQexecParams")
        resultStatus = try find("PQresultStatus")
        resultErrorField = try find("PQresultErrorField")
        ntuples = try find("PQntuples")
        nfields = try find("PQnfields")
        fname = try find("PQfname")
        ftype = try find("PQftype")
        cmdTuples = try find("PQcmdTuples")
        getvalue = try find("PQgetvalue")
        getlength = try find("PQgetlength")
        getisnull = try find("PQgetisnull")
        clear = try find("PQclear")
    }
}
