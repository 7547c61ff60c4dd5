import Testing
@testable import BreezeImport

/// Crashes found by `tools/fuzz.sh` in the parsers, as plain tests with the reproducer's bytes (the inputs are
/// also in `tools/fuzz/regressions/import-<parser>/`, which every fuzz run replays first).
struct ImportFuzzRegressionTests {
    /// The rows of a file read piece by piece, at file line numbers.
    static func rowsByChunks(_ bytes: [UInt8], target: Int) throws -> (header: [[String]], rows: [(Int, [String])]) {
        var headers: [[String]] = [], rows: [(Int, [String])] = []
        for c in CSVChunks.split(bytes, targetBytes: target) {
            let t = try CSVTable(c.bytes, file: "chunk")
            headers.append(t.header)
            rows += t.rows.map { ($0.line + c.lineOffset, $0.fields) }
        }
        return (headers, rows)
    }

    static func expectSameAsWhole(_ bytes: [UInt8], target: Int) throws {
        let whole = try CSVTable(bytes, file: "whole")
        let (headers, rows) = try rowsByChunks(bytes, target: target)
        #expect(headers.allSatisfy { $0 == whole.header }, "\(headers) vs \(whole.header)")
        #expect(rows.map(\.0) == whole.rows.map(\.line))
        #expect(rows.map(\.1) == whole.rows.map(\.fields))
    }

    /// fuzz-import csv-chunks, `lone-cr-before-header` (minimised): a lone CR is a line end to CSVTable,
    /// but the chunker counted LF only, so every row after it was reported one line early.
    @Test func aLoneCarriageReturnCountsAsALineInChunks() throws {
        try Self.expectSameAsWhole([0x0D, 0x00, 0x0A, 0x2E], target: 2)
        try Self.expectSameAsWhole(Array("id,v\r1,a\r2,b\n3,c\r\n4,d\r5,e\n".utf8), target: 4)
    }

    /// Found while fixing the above: a header ended by a lone CR was taken up to the next LF (swallowing a
    /// data row into every piece's header), and a byte-order mark followed by a blank line made the blank
    /// line the pieces' header.
    @Test func headersEndedByACarriageReturnOrAfterAByteOrderMarkMatchTheWholeFile() throws {
        try Self.expectSameAsWhole(Array("id,v\r1,a\n2,b\n3,c\n".utf8), target: 3)
        try Self.expectSameAsWhole([0xEF, 0xBB, 0xBF] + Array("\nid,v\n1,a\n2,b\n3,c\n".utf8), target: 3)
        try Self.expectSameAsWhole(Array("\"i\nd\",v\n1,\"x\ny\"\n\"\",2\n3,c".utf8), target: 3)
    }

    /// fuzz-import csv-chunks, `cr-header-then-blank-line` (minimised, found by the CI run after the fix
    /// above): a header ended by a lone CR, copied before a piece that starts with a blank line, made one
    /// CRLF of the two, so the blank line vanished and the piece's rows came one line early.
    @Test func aHeaderEndedByACarriageReturnDoesNotSwallowABlankLine() throws {
        try Self.expectSameAsWhole([0x00, 0x0D, 0x00, 0x0A, 0x0A, 0x2E], target: 2)
    }

    /// fuzz-import csv-chunks, `bom-line-as-header` (found by a CI run's AddressSanitizer pass): a header line
    /// that begins with a byte-order mark but not at the file's start keeps it in a whole-file parse; copied
    /// to the start of each piece, the mark was dropped there and the pieces took the next line as header.
    @Test func aHeaderThatBeginsWithAByteOrderMarkInsideTheFileMatchesTheWholeFile() throws {
        try Self.expectSameAsWhole([0x00, 0x0A, 0xEF, 0xBB, 0xBF, 0x0A] + Array("J>O\u{5}2otap\n".utf8), target: 2)
        try Self.expectSameAsWhole(Array("\nx".utf8) + [0xEF, 0xBB, 0xBF] + Array("id,v\n1,a\n2,b\n3,c\n".utf8), target: 3)
        try Self.expectSameAsWhole([0xEF, 0xBB, 0xBF, 0xEF, 0xBB, 0xBF] + Array("id,v\n1,a\n2,b\n".utf8), target: 3)
    }

    /// fuzz-import date, `arabic-indic-offset-digits` and `vulgar-fraction-offset` (found by a CI run's fast
    /// pass): digits other than ASCII are numbers to `Character.isNumber` but not to `Int`, and the offset's
    /// `Int(...)!` trapped. They are refused now, like any other malformed offset.
    @Test func anOffsetWrittenWithDigitsOtherThanASCIIIsRefusedNotTrapped() {
        #expect(DateParsing.isoDateTime("2023-10-22T00:00:00+\u{0660}\u{0661}:00") == nil)
        #expect(DateParsing.isoDateTime("2023-10-22T00:00+0\u{00BD}") == nil)
        #expect(DateParsing.isoDateTime("2023-10-22T00:00:00+01:00") == 1_697_929_200)
    }
}
