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

    /// Pieces of about `targetBytes` each (one piece when the file is smaller). Records are read as
    /// `CSVTable` reads them, so every piece parses to the file's header and to the file's rows, at the
    /// file's line numbers once `lineOffset` is added.
    public static func split(_ bytes: [UInt8], targetBytes: Int) -> [Chunk] {
        guard bytes.count > targetBytes else { return [Chunk(bytes: bytes, lineOffset: 0)] }
        // One pass that reads records exactly as CSVTable does (a quote opens a quoted field only while the
        // field is empty; outside quotes a record ends at LF, CRLF or a lone CR, and each counts one line;
        // inside quotes only LF counts), so the header and the line numbers agree with a whole-file parse.
        // (Fuzzing found that counting LF alone misnumbered every line after a lone CR.)
        let n = bytes.count
        var i = n >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF ? 3 : 0   // BOM: CSVTable drops it
        var line = 1
        var inQuotes = false, fieldEmpty = true, recordEmpty = true
        var recordStart = i, recordLine = 1
        var header: [UInt8]?
        var headerLines = 0
        var chunkStart = 0, chunkLine = 0
        var chunks: [Chunk] = []
        func cut(_ end: Int) {
            // In a chunk the header takes lines 1 ... headerLines, so its first data line is headerLines + 1.
            chunks.append(Chunk(bytes: header! + bytes[chunkStart..<end], lineOffset: chunkLine - 1 - headerLines))
        }
        while i < n {
            let b = bytes[i]
            if inQuotes {
                if b == 0x22 {
                    if i + 1 < n && bytes[i + 1] == 0x22 { i += 1; fieldEmpty = false; recordEmpty = false } else { inQuotes = false }
                } else {
                    if b == 0x0A { line += 1 }
                    fieldEmpty = false
                    recordEmpty = false
                }
            } else if b == 0x22 && fieldEmpty {
                inQuotes = true
            } else if b == 0x2C {
                fieldEmpty = true
                recordEmpty = false
            } else if b == 0x0A || b == 0x0D {
                if b == 0x0D && i + 1 < n && bytes[i + 1] == 0x0A { i += 1 }
                line += 1
                let end = i + 1
                if header == nil {
                    if !recordEmpty {          // the first record that is not an empty line
                        header = Array(bytes[recordStart..<end])
                        // A header ended by a lone CR would join a piece's leading LF into one CRLF line end.
                        if header!.last == 0x0D { header!.append(0x0A) }
                        // A header that itself begins with a BOM (one not at the file's start, which CSVTable
                        // keeps) would open every piece, where CSVTable drops it: give the piece one to drop.
                        if header!.starts(with: [0xEF, 0xBB, 0xBF]) { header!.insert(contentsOf: [0xEF, 0xBB, 0xBF], at: 0) }
                        headerLines = line - recordLine
                        chunkStart = end
                        chunkLine = line
                    }
                } else if end - chunkStart >= targetBytes {
                    cut(end)
                    chunkStart = end
                    chunkLine = line
                }
                recordStart = end
                recordLine = line
                fieldEmpty = true
                recordEmpty = true
            } else {
                fieldEmpty = false
                recordEmpty = false
            }
            i += 1
        }
        guard header != nil, !chunks.isEmpty || chunkStart < n else { return [Chunk(bytes: bytes, lineOffset: 0)] }
        if chunkStart < n { cut(n) }
        return chunks
    }
}
