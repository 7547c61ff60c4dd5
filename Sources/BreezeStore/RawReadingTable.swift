/// The storage baseline of `breeze-bench screens`: the same readings in the plainest SQLite table that can
/// answer a screen, one row per (source, sensor, time) with a REAL column per quantity, keyed by its primary
/// key (a WITHOUT ROWID table, so the key is the only index), with the log's pragmas
/// (`RawBaseline.database`). What Breeze stores beyond it (the events with their ids, stamps and hashes, the
/// projection's stamps per value, its hourly aggregates) is the price of sync and of last-writer-wins facts.
public final class RawReadingTable {
    let db: Database
    let columns: Int

    /// A new table of `columns` values a row in a new database at `path`.
    public init(path: String, columns: Int) throws(StoreError) {
        self.columns = columns
        db = try RawBaseline.database(at: path, durability: .normal)
        do {
            let values = (0..<columns).map { "v\($0) REAL" }.joined(separator: ", ")
            try db.execute("CREATE TABLE readings(source TEXT NOT NULL, sensor TEXT NOT NULL, time INTEGER NOT NULL, \(values), "
                           + "PRIMARY KEY(source, sensor, time)) WITHOUT ROWID")
        } catch { throw StoreError.from(error, path: path) }
    }

    /// Inserts rows (each with `columns` values; nil is NULL) in one transaction.
    public func insert(_ rows: [(source: String, sensor: String, time: Int64, values: [Double?])]) throws(StoreError) {
        do {
            try db.writeTransaction {
                let marks = Array(repeating: "?", count: columns + 3).joined(separator: ", ")
                let insert = try db.cached("INSERT OR REPLACE INTO readings VALUES (\(marks))")
                for r in rows {
                    insert.reset()
                    try insert.bind(1, r.source)
                    try insert.bind(2, r.sensor)
                    try insert.bind(3, r.time)
                    for i in 0..<columns {
                        if i < r.values.count, let v = r.values[i] { try insert.bind(Int32(4 + i), v) } else { try insert.bindNull(Int32(4 + i)) }
                    }
                    _ = try insert.step()
                }
            }
        } catch { throw StoreError.from(error, path: db.path) }
    }

    /// Checkpoints the write-ahead log into the file (so the file's size is the table's) and closes it.
    public func close() {
        _ = try? db.scalarInt("PRAGMA wal_checkpoint(TRUNCATE)")
        db.close()
    }
}
