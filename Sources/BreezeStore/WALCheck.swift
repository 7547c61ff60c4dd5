import Glibc

/// Finds damage in a write-ahead log that SQLite would not report.
///
/// SQLite reads the WAL (https://www.sqlite.org/fileformat2.html#walformat) up to the first frame whose
/// salt or cumulative checksum is wrong and silently ignores the rest: correct for a write torn by a crash
/// (only the last, unacknowledged transaction can be torn when every commit is synced), but a damaged byte in
/// an older frame would silently drop every transaction committed after it. Each frame's checksum is
/// computed from the *stored* checksum of the frame before, so frames after a damaged one can still be
/// checked. This check reports damage when, after the first bad frame, a valid commit frame is followed by
/// yet another valid frame (so that commit was synced, and the bad frame before it was once good), or
/// when the header is damaged but its first frame checks out against it.
///
/// Only meaningful for logs written with `synchronous=FULL`: with NORMAL, a power cut may legitimately
/// leave later frames on disk without earlier ones.
enum WALCheck {
    /// A description of the damage, or nil when the WAL is absent, sound, or only torn at its end.
    static func damage(walPath: String, fallbackPageSize: Int) -> String? {
        guard let f = fopen(walPath, "rb") else { return nil }
        defer { fclose(f) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = fread(&chunk, 1, chunk.count, f)
            if n <= 0 { break }
            bytes += chunk[0..<n]
        }
        guard bytes.count > 32 else { return nil }

        func be32(_ at: Int) -> UInt32 {
            UInt32(bytes[at]) << 24 | UInt32(bytes[at + 1]) << 16 | UInt32(bytes[at + 2]) << 8 | UInt32(bytes[at + 3])
        }
        let magic = be32(0)
        let bigEndianWords = magic == 0x377F_0683
        func checksum(_ ranges: [Range<Int>], _ s: (UInt32, UInt32)) -> (UInt32, UInt32) {
            var (s1, s2) = s
            for r in ranges {
                var i = r.lowerBound
                while i + 8 <= r.upperBound {
                    let x0: UInt32, x1: UInt32
                    if bigEndianWords {
                        x0 = be32(i); x1 = be32(i + 4)
                    } else {
                        x0 = UInt32(bytes[i]) | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2]) << 16 | UInt32(bytes[i + 3]) << 24
                        x1 = UInt32(bytes[i + 4]) | UInt32(bytes[i + 5]) << 8 | UInt32(bytes[i + 6]) << 16 | UInt32(bytes[i + 7]) << 24
                    }
                    s1 = s1 &+ x0 &+ s2
                    s2 = s2 &+ x1 &+ s1
                    i += 8
                }
            }
            return (s1, s2)
        }

        let headerPageSize = Int(be32(8))
        let headerChecksum = (be32(24), be32(28))
        let headerValid = (magic == 0x377F_0682 || magic == 0x377F_0683)
            && headerPageSize >= 512 && headerPageSize <= 65536 && headerPageSize & (headerPageSize - 1) == 0
            && checksum([0..<24], (0, 0)) == headerChecksum
        let pageSize = headerValid ? headerPageSize : fallbackPageSize
        let frameSize = 24 + pageSize
        let frames = (bytes.count - 32) / frameSize
        guard frames > 0 else { return nil }
        func offset(_ i: Int) -> Int { 32 + i * frameSize }
        let salts = headerValid ? (be32(16), be32(20)) : (be32(offset(0) + 8), be32(offset(0) + 12))
        /// Frame `i` checks out against the stored checksum before it.
        func ok(_ i: Int) -> Bool {
            let o = offset(i)
            guard (be32(o + 8), be32(o + 12)) == salts else { return false }
            let before = i == 0 ? headerChecksum : (be32(offset(i - 1) + 16), be32(offset(i - 1) + 20))
            return checksum([o..<(o + 8), (o + 24)..<(o + frameSize)], before) == (be32(o + 16), be32(o + 20))
        }
        func isCommit(_ i: Int) -> Bool { be32(offset(i) + 4) != 0 }

        if !headerValid {
            return ok(0) ? "its header is damaged, so SQLite would ignore all \(frames) frames" : nil
        }
        guard let firstBad = (0..<frames).first(where: { !ok($0) }) else { return nil }
        var commitAfter: Int?
        for i in (firstBad + 1)..<frames where ok(i) {
            if let c = commitAfter, i > c {
                return "frame \(firstBad + 1) of \(frames) is damaged and committed transactions follow it, which SQLite would drop silently"
            }
            if commitAfter == nil && isCommit(i) { commitAfter = i }
        }
        return nil
    }
}
