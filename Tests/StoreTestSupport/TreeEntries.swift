import Storage

/// How many entries each table and index of a SQLite database holds (the cells of its leaf
/// pages, from `dbstat`), by name, for the names `LIKE pattern`: what a test reads to say which
/// trees a write reached, without timing anything.
public func entriesByTree(_ database: any SQLDatabase, named pattern: String = "%") throws -> [String: Int64] {
    let rows = try database.read { c in
        try c.query("SELECT name, SUM(ncell) AS entries FROM dbstat WHERE pagetype = 'leaf' AND name LIKE ? GROUP BY name", [.text(pattern)])
    }
    return Dictionary(uniqueKeysWithValues: try rows.map { (try $0.string("name"), try $0.int("entries")) })
}
