import BreezeStore
@preconcurrency import Glibc

/// Importing real data files (PurpleAir, sensor registries, AirNow, AQS, OpenAQ, Google Pollen, daily
/// temperatures, glucose monitors: `Importers.all`).
extension Replica {
    /// What one import did.
    public struct ImportSummary: Sendable, Equatable, Codable {
        /// The file (or the name given to `importData`).
        public var file: String
        /// The format it was read as.
        public var format: String
        /// Data rows (or JSON elements) read.
        public var rowsRead = 0
        /// Events the importer produced (rows kept).
        public var records = 0
        /// Events stored (a reading keeps only its quantities not already held).
        public var storedEvents = 0
        /// Facts new to this replica, facts that replaced another value of their key (a sensor that moved, a
        /// newer forecast), and facts already held with the same value (not stored again).
        public var storedFacts = 0, updatedFacts = 0, duplicateFacts = 0
        /// The rows (events the importer produced) by what happened to them: any fact updated, else any new,
        /// else all duplicates. With the skipped rows they add up to the rows read, for formats of one event a
        /// row (PurpleAir, sensor registries, daily temperatures, glucose).
        public var storedRows = 0, updatedRows = 0, duplicateRows = 0
        /// The rows skipped, each with its line and reason.
        public var skipped: [ImportIssue] = []
    }

    /// Where a long import is.
    public enum ImportProgress: Sendable, Equatable {
        /// Bringing the facts projection (which imports compare with) up to date with what arrived by sync
        /// (events so far).
        case indexing(events: Int)
        /// Parsing a large file once before anything of it is stored (so a bad file is refused whole).
        case checking(file: String, percent: Int)
        /// Storing (percent of the file's bytes, rows read so far).
        case storing(file: String, percent: Int, rows: Int)
    }

    /// The formats `importFile` reads, with a line each.
    public static var importFormats: [(format: String, summary: String)] {
        Importers.all.map { ($0.format, $0.summary) }
    }

    /// Imports a file: parses it completely (gunzipped first if it is gzip) before anything from it is
    /// stored, then stores each fact once, however often the file or overlapping ones are imported: each fact
    /// is compared with the value held for its natural key (synced facts included), and only new or changed
    /// values are stored (a changed one replaces the old on every replica: a sensor registered again with its
    /// location, a newer forecast). Observers and peers
    /// hear of each piece of a large file (8 MiB of CSV) as it commits; other calls of this replica may run between pieces.
    ///
    /// ```swift
    /// let summary = try replica.importFile("sensors.csv", format: "sensors-csv")
    /// print(summary.storedFacts, summary.skipped.count)
    /// ```
    ///
    /// - Parameters:
    ///   - options: what the file does not say itself (a sensor id, a location, a unit, a station).
    ///   - user: whose health stream biomarker readings go to (default `self.options.user`; it replaces
    ///     `options.user`).
    /// - Throws: `BreezeError.importRefused` when the file cannot be read or is not in `format` (nothing from
    ///   it is stored), `.invalidArgument` for an unknown format; a store error when storing fails (facts of
    ///   earlier batches of the file may be stored: importing again stores only what is missing).
    public func importFile(_ path: String, format: String, options: ImportOptions = ImportOptions(), user: String? = nil,
                           progress: (ImportProgress) -> Void = { _ in }) throws(BreezeError) -> ImportSummary {
        let bytes: [UInt8]
        do { bytes = try Replica.readFile(path) } catch { throw BreezeError(.importRefused, error.description, underlying: error) }
        return try importData(bytes, name: path, format: format, options: options, user: user, progress: progress)
    }

    /// Imports the bytes of a file (as `importFile` does), for data an app downloaded; `name` is how issues
    /// and errors name it.
    ///
    /// ```swift
    /// let summary = try replica.importData(downloaded, name: "pollen-today.json", format: "google-pollen",
    ///                                      options: { var o = ImportOptions(); o.at = (51.17, 10.45); return o }())
    /// ```
    public func importData(_ data: [UInt8], name: String, format: String, options: ImportOptions = ImportOptions(),
                           user: String? = nil, progress: (ImportProgress) -> Void = { _ in }) throws(BreezeError) -> ImportSummary {
        guard let importer = Importers.named(format) else {
            throw BreezeError(.invalidArgument, "unknown format '\(format)'; formats: \(Importers.all.map { $0.format }.joined(separator: ", "))")
        }
        var options = options
        options.user = try resolve(user)
        if let s = options.sensor { _ = try Validation.sensor(s) }
        let bytes: [UInt8]
        do { bytes = try Gzip.maybeInflate(data, file: name) } catch { throw BreezeError(.importRefused, error.description, underlying: error) }
        try withLog { log in _ = try log.catchUpProjection { n in if n > 0 { progress(.indexing(events: n)) } } }
        var summary = ImportSummary(file: name, format: format)
        // Large CSV files of formats whose rows stand alone are parsed and stored in pieces, so memory stays
        // bounded. Every piece is parsed once before anything is stored (a file that fails anywhere is
        // refused whole), then again to store it. Formats that group rows (monitor files), files with one
        // location for the whole file, and JSON are parsed in one piece.
        var body = bytes[...]
        if body.starts(with: [0xEF, 0xBB, 0xBF]) { body = body.dropFirst(3) }
        let first = body.first(where: { $0 != 0x20 && $0 != 0x0A && $0 != 0x0D && $0 != 0x09 })
        let isJSON = first == UInt8(ascii: "{") || first == UInt8(ascii: "[")
        let splittable = !isJSON && options.at == nil && Replica.rowLocalFormats.contains(importer.format)
        let chunks = splittable ? CSVChunks.split(bytes, targetBytes: Replica.importChunkBytes)
                                : [CSVChunks.Chunk(bytes: bytes, lineOffset: 0)]
        if chunks.count > 1 {
            for (n, chunk) in chunks.enumerated() {
                do { _ = try importer.parse(chunk.bytes, file: name, options: options) } catch {
                    throw BreezeError(.importRefused, "\(error.description) (in the part of the file from line \(chunk.lineOffset + 2))",
                                      underlying: error)
                }
                progress(.checking(file: name, percent: (n + 1) * 100 / chunks.count))
            }
        }
        var processed = 0
        for chunk in chunks {
            var parsed: ParseResult
            do { parsed = try importer.parse(chunk.bytes, file: name, options: options) } catch {
                throw BreezeError(.importRefused, error.description, underlying: error)
            }
            if chunk.lineOffset > 0 {
                for i in parsed.issues.indices { parsed.issues[i].line += chunk.lineOffset }
                for i in parsed.records.indices { parsed.records[i].line += chunk.lineOffset }
            }
            summary.rowsRead += parsed.rowsRead
            summary.skipped += parsed.issues
            // An event too large for the log is a row problem, reported with its line.
            var scratch = ByteWriter(capacity: 1024)   // reused: measuring a row allocates nothing
            let fits = parsed.records.filter { rec in
                scratch.removeAll()
                _ = rec.body.encodePayload(into: &scratch)
                let size = scratch.bytes.count
                if size > Event.maxEncodedSize - 4096 {
                    summary.skipped.append(ImportIssue(file: name, line: rec.line, reason: "row too large to store (\(size) bytes)"))
                    return false
                }
                return true
            }
            summary.records += fits.count
            var done = 0
            while done < fits.count {
                let slice = fits[done..<min(done + Replica.importBatch, fits.count)]
                let f: EventLog.FactAppendReport
                do { f = try withLog { log in try log.appendFacts(slice.map { ($0.stream, $0.body) }) } } catch {
                    throw BreezeError(error.code, "\(name): storing failed: \(error.description) (facts of earlier batches of this file may be stored; importing again stores only what is missing)",
                                      underlying: error)
                }
                if f.storedEvents > 0 { committed() }
                summary.storedEvents += f.storedEvents
                summary.storedFacts += f.storedFacts
                summary.updatedFacts += f.updatedFacts
                summary.duplicateFacts += f.duplicateFacts
                for o in f.outcomes {
                    switch o {
                    case .stored: summary.storedRows += 1
                    case .updated: summary.updatedRows += 1
                    case .duplicate: summary.duplicateRows += 1
                    }
                }
                done += slice.count
            }
            processed += chunk.bytes.count
            progress(.storing(file: name, percent: min(100, processed * 100 / max(1, bytes.count)), rows: summary.rowsRead))
        }
        return summary
    }

    /// Facts stored per transaction: a piece of a large file (8 MiB of CSV is about 80,000 rows) goes in whole,
    /// so a key the piece repeats with another value is stored once, with its last value (within a transaction
    /// `appendFacts` keeps the last of each key) and importing the file again stores nothing.
    static let importBatch = 200_000

    /// Size of the pieces a large CSV file is parsed in.
    static let importChunkBytes = 8 << 20
    /// Formats whose rows are independent of each other (so a file can be cut between any two rows).
    static let rowLocalFormats: Set<String> = ["purpleair-csv", "sensors-csv", "airdata-daily", "glucose-csv", "daily-temperature"]

    /// The largest file `readFile` takes (1 GiB, the same cap as decompressed gzip): an endless input such as
    /// `/dev/zero` or a runaway pipe is refused with a clear error once it passes this, instead of being read
    /// until memory runs out.
    public static let maxFileBytes = 1 << 30

    /// Reads a whole file of at most `limit` bytes, as `importFile` does.
    ///
    /// ```swift
    /// let bytes = try Replica.readFile("export.jsonl")
    /// ```
    ///
    /// - Throws: `ImportError` naming the file and why it could not be read (including a file larger than
    ///   `limit`).
    public static func readFile(_ path: String, limit: Int = Replica.maxFileBytes) throws(ImportError) -> [UInt8] {
        guard let f = fopen(path, "rb") else { throw ImportError(file: path, "cannot read (\(String(cString: strerror(errno))))") }
        defer { fclose(f) }
        var out: [UInt8] = []
        var buf = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = fread(&buf, 1, buf.count, f)
            if n > 0 {
                guard out.count + n <= limit else {
                    throw ImportError(file: path, "larger than \(limit) bytes (\(limit >> 20) MiB), the most one import reads; split it, or it is an endless input such as a device")
                }
                out.append(contentsOf: buf[0..<n])
            }
            if n < buf.count {
                if ferror(f) != 0 { throw ImportError(file: path, "read error") }
                break
            }
        }
        return out
    }
}
