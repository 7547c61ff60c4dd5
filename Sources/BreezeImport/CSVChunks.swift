/// Splits a large CSV file into pieces that each start with the header, so a file can be parsed and stored
/// piece by piece with bounded memory. Cuts only at line ends outside quoted fields.
public enum CSVChunks {
    /// One piece: the header line followed by whole data lines, and how many file lines precede its first
    /// data line beyond the header (add it to a line number reported for the piece to get the file's line).
    public struct Chunk: Sendable {
        public var bytes: [UInt8]
        public var lineOffset: Int
        public init(bytes: [UInt8], lineOffset: Int) {
            self.bytes = bytes
            self.lineOffset = lineOffset
        }
    }

    /// Pieces of about `targetBytes` each (one piece when the file is smaller). Quotes are tracked as
    /// `CSVTable` reads them: a quote opens a quoted field only at the start of a field.
    public static func split(_ bytes: [UInt8], targetBytes: Int) -> [Chunk] {
        guard bytes.count > targetBytes else { return [Chunk(bytes: bytes, lineOffset: 0)] }
        // The header is the first non-empty line, as CSVTable takes it.
        var headerStart = 0
        while headerStart < bytes.count && (bytes[headerStart] == 0x0A || bytes[headerStart] == 0x0D) { headerStart += 1 }
        guard let headerEnd = bytes[headerStart...].firstIndex(of: 0x0A) else { return [Chunk(bytes: bytes, lineOffset: 0)] }
        let skipped = bytes[..<headerStart].filter { $0 == 0x0A }.count
        let header = Array(bytes[headerStart...headerEnd])
        var chunks: [Chunk] = []
        var start = headerEnd + 1
        var linesBefore = skipped      // physical lines after the header line and before `start`
        var i = start, quotes = false, fieldStart = true, lines = 0
        while i < bytes.count {
            let b = bytes[i]
            if quotes {
                if b == 0x22 {
                    if i + 1 < bytes.count && bytes[i + 1] == 0x22 { i += 1 } else { quotes = false }
                }
            } else if b == 0x22 && fieldStart {
                quotes = true
            }
            fieldStart = !quotes && (b == 0x2C || b == 0x0A || b == 0x0D)
            if b == 0x0A {
                lines += 1                  // physical lines, as CSVTable numbers them
                if !quotes && i + 1 - start >= targetBytes {
                    chunks.append(Chunk(bytes: header + bytes[start...i], lineOffset: linesBefore))
                    linesBefore += lines
                    lines = 0
                    start = i + 1
                }
            }
            i += 1
        }
        if start < bytes.count { chunks.append(Chunk(bytes: header + bytes[start...], lineOffset: linesBefore)) }
        return chunks
    }
}
