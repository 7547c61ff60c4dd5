import Testing
@testable import BreezeImport

struct DateParsingTests {
    @Test func isoDateTimesWithAndWithoutOffsetsBecomeUnixSeconds() {
        #expect(DateParsing.isoDateTime("1970-01-01T00:00:00Z") == 0)
        #expect(DateParsing.isoDateTime("2023-10-22T23:20:00Z") == 1_698_016_800)
        #expect(DateParsing.isoDateTime("2023-10-22 23:20:00") == 1_698_016_800)
        #expect(DateParsing.isoDateTime("2023-10-22T18:20:00-05:00") == 1_698_016_800)
        #expect(DateParsing.isoDateTime("2019-08-01T00:00") == 1_564_617_600)
        #expect(DateParsing.isoDateTime("2010-03-24 09:51:00", defaultOffsetSeconds: -5 * 3600) == 1_269_442_260)
        #expect(DateParsing.isoDateTime("2023-02-30T00:00:00Z") == nil)
        #expect(DateParsing.isoDateTime("yesterday") == nil)
    }

    @Test func datesInTheThreeWrittenFormsParse() {
        #expect(DateParsing.date("1930-01-01")! == (1930, 1, 1))
        #expect(DateParsing.date("2020/12/31")! == (2020, 12, 31))
        #expect(DateParsing.date("8/1/2019")! == (2019, 8, 1))
        #expect(DateParsing.date("2021-02-29") == nil)
        #expect(DateParsing.date("2020-02-29")! == (2020, 2, 29))
        #expect(DateParsing.days(year: 2000, month: 3, day: 1) == 11_017)
    }
}

struct CSVChunksTests {
    @Test func piecesRepeatTheHeaderKeepEveryLineAndNeverCutAQuotedField() throws {
        let text = "a,b\n" + (1...1000).map { i in i % 7 == 0 ? "\(i),\"x\ny\"\n" : "\(i),z\n" }.joined()
        let chunks = CSVChunks.split(Array(text.utf8), targetBytes: 500)
        #expect(chunks.count > 5)
        var ids: [Int] = []
        var expectedOffset = 0
        for c in chunks {
            let t = try CSVTable(c.bytes, file: "t")
            #expect(t.header == ["a", "b"])
            #expect(c.lineOffset == expectedOffset)
            expectedOffset += t.rows.count + t.rows.filter { $0.fields[1].contains("\n") }.count
            ids += t.rows.map { Int($0.fields[0])! }
        }
        #expect(ids == Array(1...1000))
        #expect(CSVChunks.split(Array("a\n1\n".utf8), targetBytes: 500).count == 1)
    }
}

struct HostileInputTests {
    @Test func absurdDatesAndOffsetsAreRefusedNotOverflowed() {
        #expect(DateParsing.date("1/1/99999999999999") == nil)
        #expect(DateParsing.date("8/1/19") == nil)                       // two-digit year: ambiguous
        #expect(DateParsing.isoDateTime("2023-10-22T00:00:00+9999999999999999:00") == nil)
        #expect(DateParsing.isoDateTime("2023-10-22T24:30:00Z") == nil)
        #expect(DateParsing.isoDateTime("2023-10-22T00:00:00-0400") == 1_697_947_200)
        #expect(DateParsing.isoDateTime("2023-10-22T00:00:00+19:00") == nil)
    }

    @Test func gzipFilesOfSeveralMembersAreReadWhole() throws {
        // Two gzip members (as `cat a.gz b.gz` makes), written with Python's gzip module:
        // gzip.compress(b"a\n", mtime=0) + gzip.compress(b"b\n", mtime=0).
        let member1: [UInt8] = [0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0x4b, 0xe4, 0x02, 0x00,
                                0x07, 0xa1, 0xea, 0xdd, 0x02, 0x00, 0x00, 0x00]
        let member2: [UInt8] = [0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0x4b, 0xe2, 0x02, 0x00,
                                0xc4, 0xf2, 0xc7, 0xf6, 0x02, 0x00, 0x00, 0x00]
        #expect(try Gzip.maybeInflate(member1 + member2, file: "x") == Array("a\nb\n".utf8))
        #expect(throws: ImportError.self) { try Gzip.maybeInflate(member1 + [1, 2, 3], file: "x") }
    }
}
