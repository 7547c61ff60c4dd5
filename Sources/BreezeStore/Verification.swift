import BreezeCore
import BreezeCrypto
import Glibc

/// `EventLog.verify(at:)`: the integrity of a database, checked without writing to it.
///
/// The database is opened read-only. SQLite's `PRAGMA integrity_check` runs on the file itself; then
/// `VACUUM INTO` copies one consistent snapshot to a temporary file (a single read transaction on the
/// original, so a node writing meanwhile is never blocked: WAL readers do not block writers) and every other
/// check runs on that copy:
///
/// - every event's stored bytes against the BLAKE2b-128 hash they end with, and that they decode;
/// - the row's indexed columns (stream, origin, epoch, counter, hlc, type) against the bytes;
/// - counters 1, 2, 3, ... per origin and stream in arrival order (no gap), and the `heads` table (the
///   version vectors) equal to the highest counter held;
/// - every conflict recorded by ingest (the same id offered with different content);
/// - each known type in a stream of its kind, and the misplacement flag (2) set exactly on those that are not;
/// - the replica's clock (`meta.hlc`) not behind any event accepted within the skew bound;
/// - the projection checkpoint (see below).
///
/// **"Projection checkpoints equal to a fresh rebuild"**: the stored projection tables reflect exactly the
/// events up to their checkpoint `meta.proj_seq`, which may lag the log (screens catch up lazily; a node
/// never projects). So the check compares like with like: on the copy, the digest of the stored tables
/// (`projectionDigest()`) is taken, every event after the checkpoint is removed, the projection is rebuilt from
/// scratch (`rebuildProjection()`) and its digest compared. Equal digests mean the incremental projection,
/// however it was built, holds what a rebuild of the same events holds; a difference is located row by row.
/// Events after the checkpoint are not in the stored tables yet, so they are not part of this check (they are
/// checked as events). A projection built by another mapping version is rebuilt on the next read anyway and is
/// not compared (a note says so).
extension EventLog {
    /// Verifies the database at `path` without writing to it.
    ///
    /// - Parameters:
    ///   - snapshotDirectory: where the temporary snapshot goes (default `$TMPDIR`, else `/tmp`); it needs
    ///     room for a copy of the database and is removed afterwards.
    ///   - progress: called with a phase name and, for long phases, how far along it is (`done` of `total`).
    /// - Throws: `StoreError.missing`, `.notBreeze`, `.newerSchema` when there is nothing to verify, or a
    ///   `StoreError` when the snapshot cannot be written (disk full). Damage inside the database is reported
    ///   in the returned report, not thrown.
    public static func verify(at path: String, snapshotDirectory: String? = nil,
                              progress: (_ phase: String, _ done: Int, _ total: Int) -> Void = { _, _, _ in })
        throws(StoreError) -> VerificationReport {
        var report = VerificationReport(path: path)
        if !FileChecks.exists(path) {
            throw StoreError(.missing, "\(path): no Breeze database here (create one with `breeze init --db \(path)`)")
        }
        if FileChecks.isDirectory(path) { throw StoreError(.notBreeze, "\(path): is a directory, not a Breeze database") }
        let original: Database
        do { original = try Database(path: path, create: false, readOnly: true) } catch {
            throw StoreError(.missing, "\(path): cannot open read-only (\(error.message))", sqliteCode: error.code)
        }
        defer { original.close() }
        original.setBusyTimeout(milliseconds: 5000)
        let version: Int64
        do {
            let appID = try original.scalarInt("PRAGMA application_id") ?? 0
            version = try original.scalarInt("PRAGMA user_version") ?? 0
            guard appID == Schema.applicationID else {
                throw StoreError(.notBreeze, "\(path): not a Breeze database (application id \(appID)); left untouched")
            }
            guard version <= Schema.current else {
                throw StoreError(.newerSchema, "\(path): written by a newer Breeze (schema \(version), this build reads up to \(Schema.current))")
            }
        } catch { throw StoreError.from(error, path: path) }

        // 1. SQLite's own check of the file.
        progress("sqlite integrity check", 0, 0)
        do {
            let q = try original.prepare("PRAGMA integrity_check")
            var lines: [String] = []
            while try q.step() { lines.append(q.text(0)) }
            if lines != ["ok"] { for l in lines { report.problem(.init(.sqlite, l)) } }
        } catch {
            report.problem(.init(.sqlite, "integrity check failed: \(error.message)"))
        }

        // 2. One consistent snapshot.
        progress("snapshot", 0, 0)
        let dir = snapshotDirectory ?? (getenv("TMPDIR").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp")
        // The snapshot is a copy of every user's data: it goes in a directory of its own that only this user
        // can enter (mode 0700, mkdtemp), and the file itself is made 0600.
        var template = Array((dir + "/breeze-verify-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            throw StoreError(.diskFull, "\(path): cannot make a private directory for the snapshot in \(dir) (\(String(cString: strerror(errno)))); pass another directory")
        }
        let privateDir = String(cString: made)
        let copyPath = privateDir + "/snapshot.db"
        defer {
            for suffix in ["", "-wal", "-shm", "-journal"] { unlink(copyPath + suffix) }
            rmdir(privateDir)
        }
        do {
            let q = try original.prepare("VACUUM INTO ?")
            try q.bind(1, copyPath)
            try q.run()
        } catch {
            if error.primaryCode == DatabaseError.full || error.primaryCode == DatabaseError.cantOpen {
                throw StoreError(.diskFull, "\(path): cannot write the snapshot to \(copyPath) (\(error.message)); pass another directory")
            }
            report.problem(.init(.sqlite, "cannot read the whole database to take a snapshot: \(error.message)"))
            return report
        }
        original.close()
        chmod(copyPath, 0o600)

        var options = Options()
        options.bootID = { "verify" }
        let copy: EventLog
        do { copy = try EventLog.open(at: copyPath, options: options) } catch {
            report.problem(.init(.sqlite, "the snapshot cannot be opened: \(error.description)"))
            return report
        }
        defer { copy.close() }
        do {
            let scan = try copy.verifyEvents(into: &report, progress: progress)
            let undecodable = scan.undecodable
            try copy.verifyHeads(scan, into: &report)
            try copy.verifyConflicts(into: &report)
            try copy.verifyClock(scan, into: &report)
            progress("projection", 0, 0)
            if version < 4 {
                report.projection = .skipped("schema \(version) has no projection tables")
            } else if undecodable > 0 {
                report.projection = .skipped("\(undecodable) stored events do not decode, so no rebuild can be compared")
            } else {
                try copy.verifyProjection(into: &report)
            }
        } catch {
            report.problem(.init(.sqlite, "reading the snapshot failed: \(error)"))
        }
        return report
    }

    private struct CounterRun {
        var last: UInt64 = 0
        var lastSeq: Int64 = 0
    }

    private struct OriginKey: Hashable {
        let stream: String
        let origin: Origin
    }

    /// What the scan of the events found, for the checks that follow it.
    private struct EventScan {
        var runs: [OriginKey: CounterRun] = [:]
        /// Counters dropped beyond a device's horizon (`horizon_gaps`): missing, but not lost.
        var gaps: [OriginKey: [ClosedRange<UInt64>]] = [:]
        /// How many of them were dropped beyond the horizon.
        var horizonCount: UInt64 = 0

        func dropped(_ key: OriginKey, _ r: ClosedRange<UInt64>) -> Bool {
            gaps[key]?.contains { $0.lowerBound <= r.lowerBound && r.upperBound <= $0.upperBound } ?? false
        }
        /// The greatest timestamp of an event accepted within the skew bound, and its seq.
        var maxHLC: UInt64 = 0, maxHLCSeq: Int64 = 0
        var undecodable = 0
    }

    /// Scans every row once, in arrival order.
    private func verifyEvents(into report: inout VerificationReport,
                              progress: (String, Int, Int) -> Void) throws -> EventScan {
        let total = Int(try db.scalarInt("SELECT count(*) FROM events") ?? 0)
        report.events = total
        progress("events", 0, total)
        var runs: [OriginKey: CounterRun] = [:]
        var scan = EventScan()
        // Counters dropped beyond a horizon, and counters retired by a compaction (held in a `reading.compact`
        // event, EventLog+Compaction): missing rows, not lost ones. One missing run may cross from one to the
        // other, so they are merged per origin.
        var retiredCount: UInt64 = 0
        for table in ["horizon_gaps", "retired"] where try db.scalarInt("SELECT count(*) FROM sqlite_master WHERE name = '\(table)'") == 1 {
            let g = try db.prepare("SELECT s.name, g.origin, g.epoch, g.first, g.last FROM \(table) g JOIN streams s ON s.id = g.stream")
            while try g.step() {
                let o = Origin(replica: ReplicaID(rawValue: UInt64(bitPattern: g.int(1))), epoch: UInt32(truncatingIfNeeded: g.int(2)))
                let r = UInt64(bitPattern: g.int(3))...UInt64(bitPattern: g.int(4))
                scan.gaps[OriginKey(stream: g.text(0), origin: o), default: []].append(r)
                let n = r.upperBound &- r.lowerBound &+ 1
                if table == "horizon_gaps" { scan.horizonCount &+= n } else { retiredCount &+= n }
            }
        }
        for (k, v) in scan.gaps { scan.gaps[k] = ReadingCompaction.normalised(v) }
        var streamsSeen: Set<String> = []
        var skewed = 0, undecodable = 0, done = 0
        var maxClockedHLC: UInt64 = 0, maxClockedSeq: Int64 = 0
        let q = try db.prepare("""
            SELECT e.seq, e.stream, s.name, e.origin, e.epoch, e.counter, e.hlc, e.type, e.flags, e.data
            FROM events e LEFT JOIN streams s ON s.id = e.stream ORDER BY e.seq
            """)
        while try q.step() {
            done += 1
            if done % 50_000 == 0 { progress("events", done, total) }
            let seq = q.int(0)
            report.lastSeq = seq
            let origin = Origin(replica: ReplicaID(rawValue: UInt64(bitPattern: q.int(3))), epoch: UInt32(truncatingIfNeeded: q.int(4)))
            let counter = UInt64(bitPattern: q.int(5))
            func id() -> String { EventID(origin: origin, counter: counter).description }     // only for findings
            let streamName: String
            if q.isNull(2) {
                streamName = "#\(q.int(1))"
                report.problem(.init(.columns, "events.stream \(q.int(1)) names no row of the streams table", seq: seq, eventID: id()))
            } else {
                streamName = q.text(2)
            }
            streamsSeen.insert(streamName)
            let hlc = UInt64(bitPattern: q.int(6)), type = q.text(7), flags = q.int(8)
            let data = q.blob(9)

            // Counters: each origin's events of a stream arrive as 1, 2, 3, ... (ingest refuses gaps).
            let key = OriginKey(stream: streamName, origin: origin)
            var run = runs[key] ?? CounterRun()
            if counter == run.last + 1 {
                run.last = counter
            } else if counter > run.last + 1 && scan.dropped(key, (run.last + 1)...(counter - 1)) {
                run.last = counter
            } else if counter > run.last + 1 {
                let missing = run.last + 1 == counter - 1 ? "counter \(run.last + 1) is" : "counters \(run.last + 1)...\(counter - 1) are"
                let between = run.lastSeq == 0 ? "before seq \(seq)" : "between seq \(run.lastSeq) and seq \(seq)"
                report.problem(.init(.gap, "\(missing) missing for origin \(origin) (\(between))", seq: seq, eventID: id(), stream: streamName))
                run.last = counter
            } else {
                report.problem(.init(.gap, "counter \(counter) arrived after counter \(run.last) of the same origin (seq \(run.lastSeq))",
                                     seq: seq, eventID: id(), stream: streamName))
            }
            run.lastSeq = seq
            runs[key] = run

            // Bytes against their hash, then decoding, then the columns against the bytes.
            guard data.count > Event.hashLength else {
                report.problem(.init(.hash, "stored event is \(data.count) bytes, too short to hold a hash", seq: seq, eventID: id(), stream: streamName))
                undecodable += 1
                continue
            }
            let body = data.count - Event.hashLength
            let stored = Array(data[body...])
            let computed = data.withUnsafeBytes { Digest.blake2b(UnsafeRawBufferPointer(rebasing: $0[0..<body]), length: Event.hashLength) }
            guard stored == computed else {
                report.problem(.init(.hash, "stored bytes do not match their hash (stored \(Digest.hex(stored)), computed \(Digest.hex(computed)))",
                                     seq: seq, eventID: id(), stream: streamName))
                undecodable += 1
                continue
            }
            let e: Event
            do { e = try Event(decoding: data, stored: true) } catch {
                report.problem(.init(.decode, "stored bytes do not decode: \(error)", seq: seq, eventID: id(), stream: streamName))
                undecodable += 1
                continue
            }
            if !e.hasShortestEncoding {
                report.note(.init(.decode, "a varint of the event is not in its shortest form (taken from a peer by an older build, before decoding refused such forms): kept and readable, never sent to a peer, which would refuse it",
                                  seq: seq, eventID: e.id.description, stream: streamName))
            }
            var differs: [String] = []
            if e.stream.description != streamName { differs.append("stream column '\(streamName)', bytes '\(e.stream)'") }
            if e.id.origin != origin || e.id.counter != counter { differs.append("id columns \(id()), bytes \(e.id)") }
            if e.hlc.rawValue != hlc { differs.append("hlc column \(HLC(rawValue: hlc)), bytes \(e.hlc)") }
            if e.type != type { differs.append("type column '\(type)', bytes '\(e.type)'") }
            if !differs.isEmpty {
                report.problem(.init(.columns, "row columns disagree with the stored event: " + differs.joined(separator: "; "),
                                     seq: seq, eventID: e.id.description, stream: e.stream.description))
            }

            // Stream kind and the misplacement flag (2): a misplaced known type is stored flagged by ingest and
            // never reduced; unflagged it would be reduced, and a flagged well-placed event would be ignored.
            let misplaced = !EventBody.type(e.type, belongsIn: e.stream)
            let flagged = flags & 2 != 0
            if misplaced && flagged {
                report.note(.init(.stream, "type '\(e.type)' does not belong in this stream; stored flagged as ingest does, never reduced",
                                          seq: seq, eventID: e.id.description, stream: e.stream.description))
            } else if misplaced {
                report.problem(.init(.stream, "type '\(e.type)' does not belong in this stream and is not flagged (reducers would apply it)",
                                     seq: seq, eventID: e.id.description, stream: e.stream.description))
            } else if flagged {
                report.problem(.init(.stream, "flagged as misplaced, but type '\(e.type)' belongs in this stream (reducers skip it)",
                                     seq: seq, eventID: e.id.description, stream: e.stream.description))
            }
            if flags & 1 != 0 {
                skewed += 1
            } else if hlc > maxClockedHLC {
                maxClockedHLC = hlc
                maxClockedSeq = seq
            }
        }
        progress("events", done, total)
        report.streams = streamsSeen.count
        report.origins = runs.count
        if skewed > 0 {
            report.note(.init(.clock, "\(skewed) events arrived with timestamps beyond the clock-skew bound (flagged; they did not move the clock)"))
        }
        if scan.horizonCount > 0 {
            report.note(.init(.gap, "\(scan.horizonCount) reading events were dropped beyond this device's horizon (recorded in horizon_gaps; its version vectors still cover them, so sync never sends them back)"))
        }
        if retiredCount > 0 {
            report.note(.init(.gap, "\(retiredCount) reading events were replaced by reading.compact or reading.rollup events (recorded in retired: held there, their rows with their stamps or their hours summed up, not lost)"))
        }
        scan.runs = runs
        scan.maxHLC = maxClockedHLC
        scan.maxHLCSeq = maxClockedSeq
        scan.undecodable = undecodable
        return scan
    }

    private func verifyHeads(_ scan: EventScan, into report: inout VerificationReport) throws {
        let runs = scan.runs
        var seen: Set<OriginKey> = []
        let q = try db.prepare("""
            SELECT h.stream, s.name, h.origin, h.epoch, h.counter FROM heads h LEFT JOIN streams s ON s.id = h.stream
            ORDER BY s.name, h.origin, h.epoch
            """)
        while try q.step() {
            let name = q.isNull(1) ? "#\(q.int(0))" : q.text(1)
            let origin = Origin(replica: ReplicaID(rawValue: UInt64(bitPattern: q.int(2))), epoch: UInt32(truncatingIfNeeded: q.int(3)))
            let head = UInt64(bitPattern: q.int(4))
            let key = OriginKey(stream: name, origin: origin)
            seen.insert(key)
            guard let run = runs[key] else {
                if !scan.dropped(key, 1...max(head, 1)) {
                    report.problem(.init(.head, "the version vector claims counters 1...\(head) of origin \(origin), but no event of it is held",
                                         stream: name))
                }
                continue
            }
            if head > run.last && scan.dropped(key, (run.last + 1)...head) { continue }
            if head != run.last {
                let what = head > run.last
                    ? "claims counters up to \(head) of origin \(origin), but the highest held is \(run.last)"
                    : "says \(head) for origin \(origin), but events up to counter \(run.last) are held (the next append would reuse an id)"
                report.problem(.init(.head, "the version vector " + what, stream: name))
            }
        }
        for (key, run) in runs.sorted(by: { ($0.key.stream, $0.key.origin.description) < ($1.key.stream, $1.key.origin.description) })
        where !seen.contains(key) {
            report.problem(.init(.head, "events up to counter \(run.last) of origin \(key.origin) are held, but the version vector has no entry for it",
                                 stream: key.stream))
        }
    }

    private func verifyConflicts(into report: inout VerificationReport) throws {
        let q = try db.prepare("SELECT stream, event_id, stored_hash, offered, source, received_ms FROM conflicts ORDER BY id")
        while try q.step() {
            let offered = q.blob(3)
            let offeredHash = offered.count > Event.hashLength ? Digest.hex(Array(offered.suffix(Event.hashLength))) : "(none)"
            let source = q.isNull(4) ? "an unknown source" : q.text(4)
            report.problem(.init(.conflict, "held with hash \(Digest.hex(q.blob(2))), offered with hash \(offeredHash) by \(source) at "
                                 + ISOTime.format(millis: q.int(5)) + " (the same id with different content; the offered event was refused)",
                                 eventID: q.text(1), stream: q.text(0)))
        }
    }

    private func verifyClock(_ scan: EventScan, into report: inout VerificationReport) throws {
        let clock = UInt64(bitPattern: try db.scalarInt("SELECT value FROM meta WHERE key = 'hlc'") ?? 0)
        let (maxHLC, seq) = (scan.maxHLC, scan.maxHLCSeq)
        if maxHLC > clock {
            report.problem(.init(.clock, "the replica's clock \(HLC(rawValue: clock)) is behind this event's timestamp \(HLC(rawValue: maxHLC)); "
                                 + "new local events would order before it", seq: seq))
        }
    }

    /// Compares the stored projection at its checkpoint with a rebuild of the same events (on the snapshot).
    private func verifyProjection(into report: inout VerificationReport) throws {
        let version = try db.scalarInt("SELECT value FROM meta WHERE key = 'proj_version'") ?? 0
        let checkpoint = try db.scalarInt("SELECT value FROM meta WHERE key = 'proj_seq'") ?? 0
        guard version == EventLog.projectionVersion || (version == 0 && checkpoint == 0) else {
            report.projection = .skipped("built by projection version \(version), this build maps events with version "
                                         + "\(EventLog.projectionVersion): it is rebuilt on the next read")
            report.note(.init(.projection, "projection built by version \(version), not \(EventLog.projectionVersion): not compared; rebuilt on the next read"))
            return
        }
        let maxSeq = try db.scalarInt("SELECT max(seq) FROM events") ?? 0
        guard checkpoint <= maxSeq else {
            report.problem(.init(.projection, "the projection checkpoint (seq \(checkpoint)) is beyond the last event (seq \(maxSeq))"))
            report.projection = .skipped("checkpoint beyond the log")
            return
        }
        // Each sensor's row of newest hours (`RecentHours`, left out of the digest: a horizon deletes rows a rebuild
        // would write) must say what its hours in `proj_readings` say.
        for sensor in try staleRecentRows() {
            report.problem(.init(.projection, "the newest hours kept for \(sensor) (proj_recent) differ from its hours in proj_readings"))
        }
        let stored = try projectionDigest()
        // Keep the stored rows to locate differences, then rebuild from the events the checkpoint covers.
        let tables = try projectionTableNames()
        for t in tables { try db.execute("DROP TABLE IF EXISTS verify_stored_\(t); CREATE TABLE verify_stored_\(t) AS SELECT * FROM \(t)") }
        let del = try db.prepare("DELETE FROM events WHERE seq > ?")
        try del.bind(1, checkpoint)
        try del.run()
        try rebuildProjection()
        let rebuilt = try projectionDigest()
        if stored == rebuilt {
            report.projection = .equal(seq: checkpoint, digest: stored)
            return
        }
        report.projection = .different(seq: checkpoint, stored: stored, rebuilt: rebuilt)
        report.problem(.init(.projection, "the stored projection at checkpoint seq \(checkpoint) differs from a rebuild of events 1...\(checkpoint) "
                             + "(digest \(stored.prefix(16))…, rebuilt \(rebuilt.prefix(16))…)"))
        for t in tables where t != "proj_recent" { try locateDifferences(table: t, into: &report) }   // checked above
    }

    /// The projection tables (`proj_*`, not a rebuild's shadow tables), found by name so the check follows
    /// whatever tables the projection keeps.
    private func projectionTableNames() throws -> [String] {
        let q = try db.prepare("""
            SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'proj\\_%' ESCAPE '\\'
            AND name NOT LIKE '%\\_next\\_%' ESCAPE '\\' ORDER BY name
            """)
        var out: [String] = []
        while try q.step() { out.append(q.text(0)) }
        return out
    }

    /// Reports up to 20 rows of `table` that differ between the stored copy and the rebuild, by primary key.
    private func locateDifferences(table: String, into report: inout VerificationReport) throws {
        let info = try db.prepare("PRAGMA table_info(\(table))")
        var columns: [String] = [], keys: [(Int, String)] = []
        while try info.step() {
            columns.append(info.text(1))
            if info.int(5) > 0 { keys.append((Int(info.int(5)), info.text(1))) }
        }
        let keyColumns = keys.isEmpty ? columns : keys.sorted { $0.0 < $1.0 }.map { $0.1 }
        let cols = columns.joined(separator: ", "), keyList = keyColumns.joined(separator: ", ")
        func keysOf(_ sql: String) throws -> [String: String] {
            let q = try db.prepare("SELECT \(keyList), * FROM (\(sql)) ORDER BY \(keyList) LIMIT 20")
            var out: [String: String] = [:]
            while try q.step() {
                let k = (0..<Int32(keyColumns.count)).map { "\(keyColumns[Int($0)])=\(q.isNull($0) ? "NULL" : q.text($0))" }
                    .joined(separator: ", ")
                out[k] = ""
            }
            return out
        }
        let storedOnly = try keysOf("SELECT \(cols) FROM verify_stored_\(table) EXCEPT SELECT \(cols) FROM \(table)")
        let rebuiltOnly = try keysOf("SELECT \(cols) FROM \(table) EXCEPT SELECT \(cols) FROM verify_stored_\(table)")
        for k in Set(storedOnly.keys).union(rebuiltOnly.keys).sorted() {
            let what: String
            switch (storedOnly[k] != nil, rebuiltOnly[k] != nil) {
            case (true, true): what = "the stored row differs from the rebuilt one"
            case (true, false): what = "a stored row that a rebuild does not produce"
            default: what = "a row a rebuild produces is missing from the stored projection"
            }
            report.problem(.init(.projection, "\(table) (\(k)): \(what)"))
        }
    }
}
