import BreezeCore

/// Continuous glucose monitor exports as CSV, plain or gzip-compressed: a time column (`datetime`,
/// `timestamp` or `time`) and a `glucose` column in mg/dL, in any order; other columns (such as the sensor
/// current `isig`) are ignored.
///
/// Each row becomes one `biomarker.reading` event (`readingType` "Blood Glucose", unit "mg/dL") in the
/// `health:<user>` stream of `ImportOptions.user`. Times are ISO 8601 (`YYYY-MM-DD HH:MM:SS` or with `T`);
/// CGM exports write them as naive local clock time with no zone, so a time without an offset is taken as
/// UTC + `ImportOptions.utcOffsetSeconds` (default 0, i.e. read as UTC). Pass the wearer's offset when it is
/// known: the file itself does not say. A time with `Z` or an explicit offset is honoured as written.
///
/// Rows are emitted as they are: repeated timestamps stay (the store keeps one per `(readingType, time)`), as
/// do gaps. A row without a glucose value is skipped as "no values"; a non-numeric value or unreadable time
/// is skipped and reported with its line.
public enum GlucoseCSVImporter: Importer {
    public static let format = "glucose-csv"
    public static let summary = "continuous glucose monitor CSV (datetime, glucose mg/dL; .gz accepted; naive local times)"

    /// The reading type written on every event.
    public static let readingType = "Blood Glucose"
    /// The unit of the `glucose` column and of every event.
    public static let unit = "mg/dL"

    static let timeColumns = ["datetime", "timestamp", "time"]

    public static func parse(_ bytes: [UInt8], file: String, options: ImportOptions) throws(ImportError) -> ParseResult {
        do {
            try StreamID.validateUserID(options.user)
        } catch {
            throw ImportError(file: file, "user '\(options.user)' is not a valid user id")
        }
        let text = try Gzip.maybeInflate(bytes, file: file)
        let table = try CSVTable(text, file: file)
        guard let timeColumn = table.column(timeColumns) else {
            throw ImportError(file: file, "not a glucose CSV: no time column (one of \(timeColumns.joined(separator: ", ")))")
        }
        guard let glucoseColumn = table.column("glucose") else {
            throw ImportError(file: file, "not a glucose CSV: no glucose column")
        }
        let stream = StreamID.health(options.user)
        var result = ParseResult()
        result.records.reserveCapacity(table.rows.count)
        for (line, fields) in table.rows {
            result.rowsRead += 1
            let row = CSVRow(fields)
            do throws(ImportRowError) {
                guard let value = try row.number(glucoseColumn, "glucose") else { throw ImportRowError("no values") }
                guard let timeText = row[timeColumn] else { throw ImportRowError("no time") }
                guard let time = fastLocalTime(timeText, offsetSeconds: options.utcOffsetSeconds)
                        ?? DateParsing.isoDateTime(timeText, defaultOffsetSeconds: options.utcOffsetSeconds) else {
                    throw ImportRowError("time '\(timeText)' is not YYYY-MM-DD HH:MM:SS")
                }
                let reading = BiomarkerReading(readingType: readingType, time: time, value: value, unit: unit)
                result.records.append(ImportRecord(stream: stream, body: .biomarkerReading(reading), line: line))
            } catch {
                result.issues.append(ImportIssue(file: file, line: line, reason: error.reason))
            }
        }
        return result
    }

    /// The common `YYYY-MM-DD HH:MM:SS` (or `T`) without an offset, read from the bytes without allocating;
    /// nil for anything else, which `DateParsing.isoDateTime` then handles (or refuses).
    private static func fastLocalTime(_ text: String, offsetSeconds: Int) -> Int64? {
        text.utf8.withContiguousStorageIfAvailable { b -> Int64? in
            guard b.count == 19, b[4] == 0x2D, b[7] == 0x2D, b[10] == 0x20 || b[10] == 0x54, b[13] == 0x3A, b[16] == 0x3A
            else { return nil }
            func num(_ from: Int, _ count: Int) -> Int? { DateParsing.digits(b, from, count) }
            guard let y = num(0, 4), let mo = num(5, 2), let d = num(8, 2), let h = num(11, 2), let mi = num(14, 2),
                  let s = num(17, 2), DateParsing.isValid(year: y, month: mo, day: d), h < 24, mi < 60, s < 60
            else { return nil }
            return DateParsing.days(year: y, month: mo, day: d) * 86400 + Int64(h * 3600 + mi * 60 + s) - Int64(offsetSeconds)
        } ?? nil
    }
}
