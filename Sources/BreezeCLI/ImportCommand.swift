import Breeze

/// `breeze import FORMAT FILE...`: parses real data files and stores their facts once each.
///
/// Every file is parsed completely before anything from it is stored, so a file that is not in the named
/// format is refused whole. Facts are de-duplicated by natural key against everything the database holds
/// (`Replica.importFile`), so importing a file twice, or overlapping files, stores each fact once.
enum ImportCommand {
    static var usage: String {
        """
        usage: breeze import FORMAT FILE... [--sensor ID] [--at LAT,LON] [--unit celsius|fahrenheit] [--station ID]
                             [--utc-offset +HH:MM] [--user ID] [--db PATH] [--json]
               breeze import jsonl FILE... [--authority FILE] [--trust-unsigned]
          a user's events under another replica's origin are taken with their origin's signature, checked
          against the cluster authority (--authority), or on the file's word (--trust-unsigned)
        formats:
        """ + Importers.all.map { "\n  \(pad($0.format, 18))\($0.summary)" }.joined()
            + "\n  \(pad(JSONLImport.format, 18))\(JSONLImport.summary)"
    }

    /// What happened to one file.
    struct FileReport {
        var file: String
        var refused: String?
        var rowsRead = 0, records = 0, storedEvents = 0, storedFacts = 0, updatedFacts = 0, duplicateFacts = 0
        var storedRows = 0, updatedRows = 0, duplicateRows = 0
        var issues: [ImportIssue] = []
    }

    static func run(_ args: [String], _ ctx: Context) throws(CLIError) {
        let a = try Arguments(args, valued: ["sensor", "at", "unit", "station", "utc-offset", "authority"], flags: ["trust-unsigned"], usage: usage)
        guard let format = a.positionals.first else { throw .usage("missing FORMAT", usage) }
        if format == JSONLImport.format {
            // Events, not facts: they bypass the importers and `appendFacts` and take the remote-ingest path.
            if let bad = a.options.keys.sorted().first(where: { $0 != "authority" && $0 != "trust-unsigned" }) {
                throw .usage("import jsonl takes no --\(bad) (the events carry their own)", usage)
            }
            let files = Array(a.positionals.dropFirst())
            guard !files.isEmpty else { throw .usage("missing FILE", usage) }
            var trust = JSONLImport.Trust()
            trust.unsigned = a.options["trust-unsigned"] != nil
            if let file = a.options["authority"] {
                do { trust.authority = try SyncOptions.publicKey(hexText: try CredentialFiles.readText(file, option: "--authority"), what: "--authority \(file)") } catch let e as CLIError { throw e } catch {
                    throw .failure("\(error)")
                }
            }
            return try JSONLImport.run(files, trust: trust, ctx)
        }
        guard a.options["authority"] == nil && a.options["trust-unsigned"] == nil else {
            throw .usage("--authority and --trust-unsigned are for import jsonl", usage)
        }
        guard Importers.named(format) != nil else {
            throw .usage("unknown format '\(format)'; formats: \((Importers.all.map { $0.format } + [JSONLImport.format]).joined(separator: ", "))", usage)
        }
        let files = Array(a.positionals.dropFirst())
        guard !files.isEmpty else { throw .usage("missing FILE", usage) }
        let options = try importOptions(a, ctx)
        let reports: [FileReport] = try ctx.withReplica { replica in
            files.map { file in
                do throws(BreezeError) {
                    let s = try replica.importFile(file, format: format, options: options) { p in
                        guard ctx.console.isTerminal else { return }
                        switch p {
                        case .indexing(let n): ctx.console.progress("indexing facts held: \(n) events")
                        case .checking(let f, let pct): ctx.console.progress("\(f): checking \(pct)%")
                        case .storing(let f, let pct, let rows): ctx.console.progress("\(f): \(pct)% (\(rows) rows)")
                        }
                    }
                    return FileReport(file: file, rowsRead: s.rowsRead, records: s.records, storedEvents: s.storedEvents,
                                      storedFacts: s.storedFacts, updatedFacts: s.updatedFacts, duplicateFacts: s.duplicateFacts,
                                      storedRows: s.storedRows, updatedRows: s.updatedRows, duplicateRows: s.duplicateRows,
                                      issues: s.skipped)
                } catch {
                    var r = FileReport(file: file)
                    r.refused = error.description.hasPrefix(file + ": ") ? String(error.description.dropFirst(file.count + 2)) : error.description
                    return r
                }
            }
        }
        if ctx.console.isTerminal { ctx.console.progress("") }
        report(reports, format: format, ctx)
        let refused = reports.filter { $0.refused != nil }
        if !refused.isEmpty {
            throw .failure("\(refused.count) of \(reports.count) file(s) refused; nothing from them was stored")
        }
    }

    static func importOptions(_ a: Arguments, _ ctx: Context) throws(CLIError) -> ImportOptions {
        var o = ImportOptions()
        o.sensor = a.options["sensor"]
        o.station = a.options["station"]
        if let at = a.options["at"] {
            let parts = at.split(separator: ",").map { Double(String($0).trimmingSpaces) }
            guard parts.count == 2, let lat = parts[0], let lon = parts[1], abs(lat) <= 90, abs(lon) <= 180 else {
                throw .failure("--at '\(at)': expected LAT,LON in degrees, e.g. 42.73,-73.69")
            }
            o.at = (lat, lon)
        }
        if let u = a.options["unit"] {
            guard let unit = TemperatureUnit(name: u) else { throw .failure("--unit '\(u)': expected celsius or fahrenheit") }
            o.unit = unit
        }
        if let off = a.options["utc-offset"] {
            guard let seconds = parseOffset(off) else { throw .failure("--utc-offset '\(off)': expected +HH:MM or -HH:MM") }
            o.utcOffsetSeconds = seconds
        }
        o.user = try ctx.userStream().userID ?? "me"
        return o
    }

    static func parseOffset(_ s: String) -> Int? {
        guard let sign = s.first, sign == "+" || sign == "-" else { return nil }
        let parts = s.dropFirst().split(separator: ":").map { Int($0) }
        guard parts.count == 2, let h = parts[0], let m = parts[1], h <= 14, m < 60 else { return nil }
        return (h * 3600 + m * 60) * (sign == "-" ? -1 : 1)
    }

    static func report(_ reports: [FileReport], format: String, _ ctx: Context) {
        if ctx.json {
            for r in reports {
                var reasons: [String: Int] = [:]
                for i in r.issues { reasons[reasonKind(i.reason), default: 0] += 1 }
                ctx.console.out(JSONValue.object([
                    ("file", .string(r.file)), ("format", .string(format)), ("refused", .string(r.refused)),
                    ("rowsRead", .int(Int64(r.rowsRead))), ("records", .int(Int64(r.records))),
                    ("storedEvents", .int(Int64(r.storedEvents))), ("storedFacts", .int(Int64(r.storedFacts))),
                    ("updatedFacts", .int(Int64(r.updatedFacts))), ("duplicateFacts", .int(Int64(r.duplicateFacts))),
                    ("storedRows", .int(Int64(r.storedRows))), ("updatedRows", .int(Int64(r.updatedRows))),
                    ("duplicateRows", .int(Int64(r.duplicateRows))), ("skippedRows", .int(Int64(r.issues.count))),
                    ("skipReasons", .object(reasons.sorted { $0.key < $1.key }.map { ($0.key, .int(Int64($0.value))) })),
                ]).text)
            }
        } else {
            for r in reports {
                if let why = r.refused {
                    ctx.console.err("breeze import: \(r.file): refused: \(why)")
                    continue
                }
                for i in r.issues.prefix(20) { ctx.console.err("breeze import: \(i)") }
                if r.issues.count > 20 { ctx.console.err("breeze import: \(r.file): ... and \(r.issues.count - 20) more skipped rows") }
                ctx.console.out("\(r.file): read \(r.rowsRead) rows: \(r.storedRows) stored, \(r.updatedRows) updated, "
                                + "\(r.duplicateRows) duplicate, \(r.issues.count) skipped" + reasonsText(r.issues)
                                + "; facts: \(r.storedFacts) new, \(r.updatedFacts) updated, \(r.duplicateFacts) duplicate, in \(r.storedEvents) events")
            }
            if reports.count > 1 {
                let ok = reports.filter { $0.refused == nil }
                func sum(_ f: (FileReport) -> Int) -> Int { ok.map(f).reduce(0, +) }
                ctx.console.out("total: \(reports.count) files (\(reports.count - ok.count) refused); read \(sum(\.rowsRead)) rows: "
                                + "\(sum(\.storedRows)) stored, \(sum(\.updatedRows)) updated, \(sum(\.duplicateRows)) duplicate, "
                                + "\(sum(\.issues.count)) skipped; facts: \(sum(\.storedFacts)) new, \(sum(\.updatedFacts)) updated, "
                                + "\(sum(\.duplicateFacts)) duplicate")
            }
        }
    }

    /// A reason without the values it quotes, so rows skipped for the same reason count together:
    /// "date 'x' is not a date" and "date 'y' is not a date" are both "date '…' is not a date".
    static func reasonKind(_ reason: String) -> String {
        var out = "", inQuote = false
        for ch in reason {
            if ch == "'" {
                out += inQuote ? "…'" : "'"
                inQuote.toggle()
            } else if !inQuote {
                out.append(ch.isNumber ? "#" : ch)
            }
        }
        var collapsed = ""
        for ch in out where !(ch == "#" && collapsed.last == "#") { collapsed.append(ch) }
        return collapsed.trimmingSpaces
    }

    static func reasonsText(_ issues: [ImportIssue]) -> String {
        guard !issues.isEmpty else { return "" }
        var reasons: [String: Int] = [:]
        for i in issues { reasons[reasonKind(i.reason), default: 0] += 1 }
        return " (" + reasons.sorted { $0.value > $1.value }.prefix(5).map { "\($0.value) \($0.key.trimmingSpaces)" }.joined(separator: "; ") + ")"
    }
}
