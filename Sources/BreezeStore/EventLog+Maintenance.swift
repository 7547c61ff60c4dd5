import BreezeCore

/// Maintenance: SQLite's integrity check (the rest of `breeze verify` is `Verification.swift`; salvage is `Salvage.swift`).
extension EventLog {
    /// Runs SQLite's `PRAGMA integrity_check`; returns the problems found (empty when the file is sound).
    public func integrityCheck() throws(StoreError) -> [String] {
        do {
            let q = try db.prepare("PRAGMA integrity_check")
            var out: [String] = []
            while try q.step() { out.append(q.text(0)) }
            return out == ["ok"] ? [] : out
        } catch { throw StoreError.from(error, path: path) }
    }

    /// The database's page size in bytes (`Schema.pageSize` for a log this build created).
    public func pageSize() throws(StoreError) -> Int {
        do { return Int(try db.scalarInt("PRAGMA page_size") ?? 0) } catch { throw StoreError.from(error, path: path) }
    }

    /// The bytes the database's pages in use take, as this connection sees it (committed write-ahead log frames
    /// included; free pages, which SQLite reuses, left out): what a server's storage grows by.
    public func bytesInUse() throws(StoreError) -> Int {
        do {
            let size = try db.scalarInt("PRAGMA page_size") ?? 0
            let pages = try db.scalarInt("PRAGMA page_count") ?? 0, free = try db.scalarInt("PRAGMA freelist_count") ?? 0
            return Int((pages - free) * size)
        } catch { throw StoreError.from(error, path: path) }
    }
}
