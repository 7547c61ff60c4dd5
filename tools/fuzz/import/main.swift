// Fuzz target: the file parsers of `BreezeImport`, one at a time. `BREEZE_FUZZ_PARSER` names the parser:
// an importer's format (`Importers.all`: purpleair-csv, sensors-csv, google-pollen, ...) or one of the
// shared pieces `csv-table`, `csv-chunks`, `date`, `gzip`. `tools/fuzz.sh` runs this binary once per
// parser, each with its own corpus: each parser is a target of its own.
//
// Checks, besides "no trap, no hang, no leak": every record an importer returns belongs in its stream and
// its body survives the event codec; a CSV cut into chunks (`CSVChunks`) parses to the same header and
// rows as the whole file; a date that parses prints as ISO text that parses to the same date; gzip output
// never exceeds its limit, and data without the gzip magic comes back unchanged.
import BreezeCore
import BreezeImport
import FuzzSupport
@preconcurrency import Glibc

/// What one run fuzzes: an importer or one of the shared pieces.
enum Parser {
    case importer(any Importer.Type)
    case csvTable, csvChunks, date, gzip
}

enum Fixed {
    /// The parser to fuzz, from the environment (read and looked up once, not per input).
    static let parser: Parser = {
        guard let p = getenv("BREEZE_FUZZ_PARSER").map({ String(cString: $0) }) else {
            fatalError("set BREEZE_FUZZ_PARSER to an importer format or csv-table, csv-chunks, date, gzip")
        }
        switch p {
        case "csv-table": return .csvTable
        case "csv-chunks": return .csvChunks
        case "date": return .date
        case "gzip": return .gzip
        default:
            guard let importer = Importers.named(p) else { fatalError("BREEZE_FUZZ_PARSER=\(p): no such parser") }
            return .importer(importer)
        }
    }()

    /// Options every importer accepts, so none refuses the file for a missing option.
    static let options: ImportOptions = {
        var o = ImportOptions()
        o.sensor = "fuzz"
        o.at = (42.7, -73.7)
        o.unit = .celsius
        o.station = "GHCND:FUZZ"
        o.utcOffsetSeconds = -18000
        return o
    }()
}

func checkImporter(_ importer: any Importer.Type, _ bytes: [UInt8]) {
    guard let result = try? importer.parse(bytes, file: "fuzz", options: Fixed.options) else { return }
    for r in result.records {
        require(r.body.belongs(in: r.stream), "\(importer.format): \(r.body.type) in stream \(r.stream)")
        let (type, version, payload) = r.body.encode()
        let again = try? EventBody.decode(type: type, version: version, payload: payload)
        require(again?.encode().payload == payload, "\(importer.format): record of line \(r.line) does not survive the codec")
    }
    require(result.rowsRead >= 0 && result.records.count + result.issues.count >= 0, "negative counts")
}

func checkChunks(_ bytes: [UInt8], target: Int) {
    let chunks = CSVChunks.split(bytes, targetBytes: target)
    guard let whole = try? CSVTable(bytes, file: "fuzz") else { return }
    var rows: [(line: Int, fields: [String])] = []
    for c in chunks {
        guard let t = try? CSVTable(c.bytes, file: "fuzz") else {
            require(false, "the whole file parses but a chunk (line offset \(c.lineOffset)) does not")
            return
        }
        require(t.header == whole.header, "a chunk's header \(t.header) differs from the file's \(whole.header)")
        rows += t.rows.map { ($0.line + c.lineOffset, $0.fields) }
    }
    require(rows.count == whole.rows.count, "chunks give \(rows.count) rows, the whole file \(whole.rows.count)")
    for (a, b) in zip(rows, whole.rows) {
        require(a.line == b.line && a.fields == b.fields, "chunk row at line \(a.line) \(a.fields) vs file line \(b.line) \(b.fields)")
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzImport(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    switch Fixed.parser {
    case .csvTable:
        _ = try? CSVTable(input.rest(), file: "fuzz")
    case .csvChunks:
        let target = Int(input.byte()) + 1
        checkChunks(input.rest(), target: target)
    case .date:
        let offset = Int(Int8(bitPattern: input.byte())) * 900
        let text = String(decoding: input.rest(), as: UTF8.self)
        if let d = DateParsing.date(text) {
            let iso = DateParsing.isoDate(d)
            let back = DateParsing.date(iso)
            require(back?.year == d.year && back?.month == d.month && back?.day == d.day, "\(text) -> \(iso) -> \(String(describing: back))")
            _ = DateParsing.days(year: d.year, month: d.month, day: d.day)
        }
        if let t = DateParsing.timeOfDay(text) { require(t >= 0 && t <= 86_400, "time of day \(t) from \(text)") }
        _ = DateParsing.isoDateTime(text, defaultOffsetSeconds: offset)
    case .gzip:
        let limit = 1 << 20
        let bytes = input.rest()
        if let out = try? Gzip.maybeInflate(bytes, file: "fuzz", limit: limit) {
            require(out.count <= limit, "inflated \(out.count) bytes beyond the limit \(limit)")
            if !Gzip.isGzip(bytes) { require(out == bytes, "non-gzip data changed") }
        }
    case .importer(let importer):
        checkImporter(importer, input.rest())
    }
    return 0
}
