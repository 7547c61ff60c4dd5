import Testing
import BreezeCore
import BreezeStore
@preconcurrency import Glibc

/// The WAL check at open (`WALCheck`): damage in an older frame is refused with advice, while the ways a
/// crash legitimately ends a WAL (a cut frame, garbage in the unsynced last transaction) open normally.
@Suite(.serialized) struct WALCheckTests {
    let torture = productsDirectory() + "/breeze-torture"

    /// A database whose WAL holds `commits` committed transactions of a writer killed before it checkpointed.
    func crashedWriter(_ dir: TempDir, commits: Int) -> String {
        let path = dir.file("w.db")
        let w = Child(torture, ["append", "--db", path, "--count", String(commits * 2), "--batch", "2", "--hold", "yes"],
                      stderrPath: "/dev/null")
        while let line = w.readLine(), line != "holding" {}
        w.kill9()
        w.wait()
        return path
    }

    /// Bytes per WAL frame: a 24-byte header and one page, of the size the WAL header records (bytes 8-11,
    /// big-endian; a new log's `Schema.pageSize`).
    func frameSize(_ wal: [UInt8]) -> Int { 24 + wal[8..<12].reduce(0) { $0 << 8 | Int($1) } }

    @Test func damageInAnOlderFrameIsRefusedAtOpen() throws {
        let dir = TempDir()
        let path = crashedWriter(dir, commits: 30)
        var wal = readFileBytes(path + "-wal")
        let frames = (wal.count - 32) / frameSize(wal)
        #expect(frames > 20)
        wal[32 + 2 * frameSize(wal) + 24 + 100] ^= 0x01   // a page byte of the third frame
        writeFileBytes(path + "-wal", wal)
        do {
            _ = try EventLog.open(at: path)
            Issue.record("a damaged WAL frame followed by committed transactions must be refused")
        } catch {
            #expect(StoreError.corrupt ~= error)
            #expect(error.description.contains("frame 3 of \(frames)") && error.description.contains("breeze salvage"), "\(error)")
        }
        // Salvage reads what SQLite accepts (the frames before the damage) into a fresh database.
        let r = try EventLog.salvage(damaged: path, into: dir.file("new.db"))
        #expect(r.salvaged < 60 && r.unreadable == 0)
    }

    @Test func aWALCutOrTornAtItsEndOpens() throws {
        let dir = TempDir()
        let path = crashedWriter(dir, commits: 30)
        let wal = readFileBytes(path + "-wal")
        // A frame cut short by the crash.
        var cut = wal
        cut += Array(wal[32..<(32 + 1000)])
        writeFileBytes(path + "-wal", cut)
        let a = try EventLog.open(at: path)
        #expect(try a.count() == 60)
        a.close()

        // Garbage over the last transaction (its frames were never synced when the power went): the last
        // commit is dropped, silently and correctly.
        let dir2 = TempDir()
        let path2 = crashedWriter(dir2, commits: 30)
        var torn = readFileBytes(path2 + "-wal")
        let last = 32 + ((torn.count - 32) / frameSize(torn) - 1) * frameSize(torn)
        for i in (last + 24)..<(last + 200) { torn[i] = 0xA5 }
        writeFileBytes(path2 + "-wal", torn)
        let b = try EventLog.open(at: path2)
        #expect(try b.count() == 58)
        #expect(try b.integrityCheck().isEmpty)
        b.close()
    }
}
