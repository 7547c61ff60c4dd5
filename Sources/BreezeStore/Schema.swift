/// The database layout and its migrations.
///
/// A Breeze database is recognised by `PRAGMA application_id` (0x42525A45, "BRZE") and versioned by
/// `PRAGMA user_version` (https://www.sqlite.org/pragma.html#pragma_application_id). Opening runs every
/// migration above the file's version in one transaction; a file whose version is above `current` was
/// written by a newer Breeze and is refused without being modified.
enum Schema {
    static let applicationID: Int64 = 0x4252_5A45
    /// The page size of a new database, in bytes (SQLite's default is 4096; an existing file keeps its own).
    ///
    /// An append batch writes its new pages to the WAL as frames of one page each, with two `write` calls per
    /// frame, and a checkpoint copies each page once more; larger pages mean four times fewer frames, system
    /// calls and b-tree page splits for the same events. On `breeze bench events` (100,000 events in
    /// transactions of 1,000, `synchronous=FULL`) 16 KiB pages gave about 13% more events per second than
    /// 4 KiB, and 32 KiB no more than 16 KiB.
    static let pageSize = 16_384

    /// WAL pages after which a commit checkpoints (`PRAGMA wal_autocheckpoint`): about 4 MiB whatever the page
    /// size, SQLite's default of 1,000 pages of 4 KiB. The WAL check at open (`WALCheck`) reads the whole WAL
    /// under the write lock, so a WAL four times larger would hold a running node's appends four times longer.
    static func checkpointPages(pageSize: Int) -> Int { max(1, (4_000 * 1024) / max(512, pageSize)) }

    /// The schema version this build writes.
    static let current: Int64 = 11

    /// `migrations[i]` takes a database from version i to i+1.
    static let migrations: [String] = [
        // 0 -> 1: the log, stream names, per-origin heads, the clock and identity, refused conflicts.
        """
        CREATE TABLE meta(key TEXT PRIMARY KEY, value ANY) WITHOUT ROWID;
        CREATE TABLE streams(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
        CREATE TABLE events(
            seq     INTEGER PRIMARY KEY,  -- local arrival order
            stream  INTEGER NOT NULL,     -- streams.id
            origin  INTEGER NOT NULL,     -- replica id (64-bit, stored signed)
            epoch   INTEGER NOT NULL,
            counter INTEGER NOT NULL,
            hlc     INTEGER NOT NULL,
            type    TEXT    NOT NULL,
            flags   INTEGER NOT NULL DEFAULT 0,  -- 1 = timestamp beyond the clock-skew bound when received
            data    BLOB    NOT NULL      -- the canonical encoding, hash included
        );
        CREATE UNIQUE INDEX events_id ON events(stream, origin, epoch, counter);
        CREATE TABLE heads(
            stream INTEGER NOT NULL, origin INTEGER NOT NULL, epoch INTEGER NOT NULL, counter INTEGER NOT NULL,
            PRIMARY KEY(stream, origin, epoch)) WITHOUT ROWID;
        CREATE TABLE conflicts(
            id INTEGER PRIMARY KEY, stream TEXT NOT NULL, event_id TEXT NOT NULL,
            stored_hash BLOB NOT NULL, offered BLOB NOT NULL, source TEXT, received_ms INTEGER NOT NULL);
        """,
        // 1 -> 2: what a running node knows of its peers, and the node's own heartbeat, for `breeze status`.
        """
        CREATE TABLE peers(
            address TEXT PRIMARY KEY, direction TEXT NOT NULL, replica TEXT, scope TEXT,
            connected INTEGER NOT NULL, last_contact_ms INTEGER, vectors BLOB, sent INTEGER NOT NULL DEFAULT 0,
            received INTEGER NOT NULL DEFAULT 0, note TEXT);
        CREATE TABLE node(id INTEGER PRIMARY KEY CHECK (id = 1), pid INTEGER, listen TEXT, started_ms INTEGER,
            heartbeat_ms INTEGER, stopped_ms INTEGER);
        """,
        // 2 -> 3: natural keys of facts, for de-duplicating imports.
        """
        -- Natural keys of the facts held (hashed group, time, hashed item), for de-duplicating imports. Filled
        -- lazily up to meta 'facts_seq' (see EventLog.appendFacts), so append and sync do not pay for it.
        CREATE TABLE IF NOT EXISTS fact_keys(key BLOB PRIMARY KEY) WITHOUT ROWID;
        INSERT OR IGNORE INTO meta(key, value) VALUES ('facts_seq', 0);
        """,
        // 3 -> 4: the facts projection (read models are computed from these tables; see ProjectionStore).
        projectionDDL(suffix: "") + """
        INSERT OR IGNORE INTO meta(key, value) VALUES ('proj_seq', 0), ('proj_version', 0);
        """,
        // 4 -> 5: imports compare facts with the projection (FactImport): the key index goes.
        """
        DROP TABLE IF EXISTS fact_keys;
        DELETE FROM meta WHERE key = 'facts_seq';
        """,
        // 5 -> 6: revocations are found without a scan of the log (a partial index holds only their rows), so a
        // node can look for new ones at every commit (EventLog.revocations(afterSeq:)).
        """
        CREATE INDEX IF NOT EXISTS events_revocations ON events(seq) WHERE type = 'device.revoke';
        """,
        // 6 -> 7: a device's horizon (EventLog+Horizon): the readings it dropped as too old, as counter ranges
        // per origin (so `breeze verify` tells them from lost ones), and when each held reading event expires.
        """
        CREATE TABLE IF NOT EXISTS horizon_gaps(stream INTEGER NOT NULL, origin INTEGER NOT NULL, epoch INTEGER NOT NULL,
            first INTEGER NOT NULL, last INTEGER NOT NULL, PRIMARY KEY(stream, origin, epoch, first)) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS reading_expiry(hour INTEGER PRIMARY KEY, seqs BLOB NOT NULL) WITHOUT ROWID;
        """,
        // 7 -> 8: origin signatures of a user's events (EventLog+Signatures, sync.md 6.9), kept beside the events
        // so that a device can relay another device's: each distinct signer chain once, then one row per event,
        // keyed by the event's id (not its seq, which `keepHighestSeq` may move).
        """
        CREATE TABLE IF NOT EXISTS signers(id INTEGER PRIMARY KEY, chain BLOB NOT NULL UNIQUE);
        CREATE TABLE IF NOT EXISTS event_signatures(stream INTEGER NOT NULL, origin INTEGER NOT NULL, epoch INTEGER NOT NULL,
            counter INTEGER NOT NULL, signer INTEGER NOT NULL, signature BLOB NOT NULL,
            PRIMARY KEY(stream, origin, epoch, counter)) WITHOUT ROWID;
        """,
        // 8 -> 9: bounds on what a peer can make a replica keep (issue 29). The device key each replica id was
        // first seen with (a replica id is bound to one key: another key for it is refused unless the first
        // was revoked), and per (stream, origin) how many conflicts were recorded in full and how many more
        // were only counted (a device re-sending its event ids with other content cannot grow `conflicts`).
        """
        CREATE TABLE IF NOT EXISTS replica_keys(replica INTEGER PRIMARY KEY, key BLOB NOT NULL, seen_ms INTEGER NOT NULL);
        CREATE TABLE IF NOT EXISTS conflict_origins(stream TEXT NOT NULL, origin INTEGER NOT NULL, epoch INTEGER NOT NULL,
            kept INTEGER NOT NULL, counted INTEGER NOT NULL, PRIMARY KEY(stream, origin, epoch)) WITHOUT ROWID;
        """,
        // 9 -> 10: each sensor's newest hours in one row (RecentHours, issue 30), so it exists for every reader;
        // the opening that migrates fills it from proj_readings (`fillRecentHours`).
        recentDDL(suffix: ""),
        // 10 -> 11: compaction (EventLog+Compaction, issue 28). Counter ranges replaced by a `reading.compact`
        // event, or said retired by a peer (sync.md 6.10): not held, not lost. And per stream, the counter up to
        // which this replica compacted its own events, and up to which it rolled them up (EventLog+Retention),
        // per epoch (a restart starts a new epoch, whose counters start at 1).
        """
        CREATE TABLE IF NOT EXISTS retired(stream INTEGER NOT NULL, origin INTEGER NOT NULL, epoch INTEGER NOT NULL,
            first INTEGER NOT NULL, last INTEGER NOT NULL, PRIMARY KEY(stream, origin, epoch, first)) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS compaction_marks(stream INTEGER NOT NULL, epoch INTEGER NOT NULL, through INTEGER NOT NULL,
            PRIMARY KEY(stream, epoch)) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS rollup_marks(stream INTEGER NOT NULL, epoch INTEGER NOT NULL, through INTEGER NOT NULL,
            PRIMARY KEY(stream, epoch)) WITHOUT ROWID;
        """,
    ]

    /// Each sensor's newest hours in one row (`RecentHours`), derived from `proj_readings`.
    static func recentDDL(suffix: String) -> String {
        """
        CREATE TABLE IF NOT EXISTS proj_recent\(suffix)(source TEXT NOT NULL, sensor TEXT NOT NULL, hour INTEGER NOT NULL,
            hours BLOB NOT NULL, PRIMARY KEY(source, sensor)) WITHOUT ROWID;
        """
    }

    /// The projection tables; a `suffix` `_next_<random>` gives the shadow tables of one rebuild.
    static func projectionDDL(suffix: String) -> String {
        """
        CREATE TABLE IF NOT EXISTS proj_sensors\(suffix)(source TEXT NOT NULL, sensor TEXT NOT NULL, name TEXT NOT NULL,
            kind TEXT NOT NULL, latitude REAL, longitude REAL, time_zone TEXT,
            hlc INTEGER NOT NULL, origin INTEGER NOT NULL, epoch INTEGER NOT NULL, counter INTEGER NOT NULL,
            PRIMARY KEY(source, sensor)) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS proj_readings\(suffix)(source TEXT NOT NULL, sensor TEXT NOT NULL, hour INTEGER NOT NULL,
            agg BLOB NOT NULL,    -- HourAggregate of the winning values (what the screens' pipeline reads), before
                                  -- data so a query of aggregates does not read the bucket
            data BLOB NOT NULL,   -- ReadingBucket: per (time, quantity) in the hour, the winning value and its stamp
            PRIMARY KEY(source, sensor, hour)) WITHOUT ROWID;   -- compact buckets (version 5 and later) fit an index page
        CREATE TABLE IF NOT EXISTS proj_facts\(suffix)(kind TEXT NOT NULL, key TEXT NOT NULL, data BLOB NOT NULL,
            hlc INTEGER NOT NULL, origin INTEGER NOT NULL, epoch INTEGER NOT NULL, counter INTEGER NOT NULL,
            PRIMARY KEY(kind, key)) WITHOUT ROWID;
        \(recentDDL(suffix: suffix))

        """
    }
}
