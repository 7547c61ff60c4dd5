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

    /// Pieces of about `targetBytes` each (one piece when the file is smaller).
    public static func split(_ bytes: [UInt8], targetBytes: Int) -> [Chunk] {
        guard bytes.count > targetBytes, let headerEnd = bytes.firstIndex(of: 0x0A) else {
            return [Chunk(bytes: bytes, lineOffset: 0)]
        }
        let header = Array(bytes[...headerEnd])
        var chunks: [Chunk] = []
        var start = headerEnd + 1
        var linesBefore = 0            // physical lines after the header and before `start`
        var i = start, quotes = false, lines = 0
        while i < bytes.count {
            let b = bytes[i]
            if b == 0x22 { quotes.toggle() }
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
