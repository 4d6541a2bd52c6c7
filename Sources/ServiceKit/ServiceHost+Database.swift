import LineProtocol
import Storage

extension ServiceHost {
    /// The service's database: PostgreSQL when `--database-url` is set (its tables in the schema
    /// named after the service, `postgres` migrations), else the SQLite file `sqliteFile` in the
    /// data directory (`sqlite` migrations). `<service>.health` reports the backend and the
    /// schema version. A server that cannot be reached at start, or refuses the password, stops
    /// the process with one line naming the URL without its password.
    public func openDatabase(
        sqliteFile: String, sqlite: [Migration], postgres: [Migration], sqliteOptions: DatabaseOptions = .init()
    ) throws -> any SQLDatabase {
        let database: any SQLDatabase
        if let url = configuration.string(CommonOptions.databaseURL), !url.isEmpty {
            var options = PostgresOptions()
            options.poolSize = try configuration.int(CommonOptions.workerThreads, range: 1...512)
            options.applicationName = "latchkey-\(name)-\(replicaID)"
            do {
                database = try PostgresDatabase(url: url, schema: name, migrations: postgres, options: options)
            } catch {
                throw ConfigurationError("cannot open the \(name) schema at \(PostgresURL.redacted(url)): \(error)")
            }
            logger.info("database", ["db.backend": "postgres", "db.url": .string(PostgresURL.redacted(url)), "db.schema": .string(name)])
        } else {
            let path = try dataFile(sqliteFile)
            database = try Database(path: path, options: sqliteOptions, migrations: sqlite)
            logger.info("database", ["db.backend": "sqlite", "db.path": .string(path)])
        }
        let backend = database.dialect.rawValue
        // Read once, here: health answers on the event loop, where a query could wait a whole
        // connect timeout while PostgreSQL is away; the version only changes at a start anyway.
        let version = try database.schemaVersion()
        addHealthCheck { ("database", ["backend": .string(backend), "schema_version": .int(Int64(version))]) }
        return database
    }
}
