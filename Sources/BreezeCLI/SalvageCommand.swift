import BreezeCore
import BreezeStore

/// `breeze salvage --db DAMAGED --out NEW`: copies every intact event of a damaged database into a new one
/// (see `EventLog.salvage`); a node run on the new file then fetches the missing events from a peer.
enum SalvageCommand {
    static let usage = "usage: breeze salvage --db DAMAGED.db --out NEW.db [--json]"

    static func run(_ args: [String], _ ctx: Context) throws(CLIError) {
        let a = try Arguments(args, valued: ["out"], usage: usage)
        _ = try a.expect([])
        guard let out = a.options["out"] else { throw .usage("missing --out NEW.db (the fresh database to write)", usage) }
        var o = EventLog.Options()
        o.durability = ctx.durability
        let r: SalvageReport
        do { r = try EventLog.salvage(damaged: ctx.dbPath, into: out, options: o) } catch { throw .failure(error.description) }
        if ctx.json {
            ctx.console.out(JSONValue.object([
                ("out", .string(out)), ("rows_read", .int(Int64(r.rowsRead))), ("salvaged", .int(Int64(r.salvaged))),
                ("unreadable", .int(Int64(r.unreadable))), ("beyond_gap", .int(Int64(r.beyondGap))),
                ("damaged_ranges", .int(Int64(r.damagedRanges))), ("replica", .string(r.newReplica.description)),
            ]).text)
        } else {
            ctx.console.out("""
                salvaged \(r.salvaged) intact events of \(r.rowsRead) rows read from \(ctx.dbPath) into \(out) (replica \(r.newReplica))
                left out: \(r.unreadable) damaged rows, \(r.beyondGap) events after a lost one; \(r.damagedRanges) unreadable ranges skipped
                next: run a node on \(out) (breeze node --db \(out) --peer HOST:PORT ...) to fetch the rest from a peer, then use \(out)
                """)
        }
    }
}
