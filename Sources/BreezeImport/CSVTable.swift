/// A CSV file (RFC 4180: commas, double-quoted fields with "" escapes, CRLF or LF) as a header and rows,
/// with 1-based line numbers for error reports. Columns are found by name, case-insensitively, in any order.
public struct CSVTable: Sendable {
    /// Header names as written (quotes removed, surrounding spaces trimmed).
    public let header: [String]
    /// Data rows: the line each starts on, and its fields.
    public let rows: [(line: Int, fields: [String])]
    /// `header` lowercased, once: importers look columns up a dozen times per file.
    private let lowercasedHeader: [String]

    /// Parses CSV text; the first non-empty line is the header. Throws when there is no header or a quote
    /// is never closed.
    public init(_ bytes: [UInt8], file: String) throws(ImportError) {
        var records: [(Int, [String])] = []
        var field: [UInt8] = []
        var fields: [String] = []
        var inQuotes = false
        var line = 1, recordLine = 1
        func endField() {
            fields.append(String(decoding: field, as: UTF8.self))
            field.removeAll(keepingCapacity: true)
        }
        // Byte by byte only at quotes, commas and line ends; the bytes between them are copied as one run.
        // (Not in withUnsafeBufferPointer: a closure that writes these variables pays a dynamic exclusivity
        // check per access.)
        let p = bytes, n = bytes.count
        var i = n >= 3 && p[0] == 0xEF && p[1] == 0xBB && p[2] == 0xBF ? 3 : 0   // UTF-8 BOM
        while i < n {
            if inQuotes {
                // Up to the next quote; a line feed inside quotes still counts a line.
                var j = i
                while j < n {
                    let c = p[j]
                    if c == 0x22 { break }
                    if c == 0x0A { line += 1 }
                    j += 1
                }
                field.append(contentsOf: p[i..<j])
                if j == n { break }
                if j + 1 < n && p[j + 1] == 0x22 { field.append(0x22); i = j + 2 } else { inQuotes = false; i = j + 1 }
                continue
            }
            let b = p[i]
            if b == 0x22 && field.isEmpty {
                inQuotes = true
                i += 1
            } else if b == 0x2C {
                endField()
                i += 1
            } else if b == 0x0A || b == 0x0D {
                if b == 0x0D && i + 1 < n && p[i + 1] == 0x0A { i += 1 }
                endField()
                if !(fields.count == 1 && fields[0].isEmpty) { records.append((recordLine, fields)) }
                fields.removeAll(keepingCapacity: true)
                line += 1
                recordLine = line
                i += 1
            } else {
                // The field is not empty from here on, so a quote in it is an ordinary byte: the run
                // ends only at a comma or a line end.
                var j = i + 1
                while j < n {
                    let c = p[j]
                    if c <= 0x2C && (c == 0x2C || c == 0x0A || c == 0x0D) { break }
                    j += 1
                }
                field.append(contentsOf: p[i..<j])
                i = j
            }
        }
        if inQuotes { throw ImportError(file: file, "line \(recordLine): a quoted field is never closed") }
        if !field.isEmpty || !fields.isEmpty {
            endField()
            records.append((recordLine, fields))
        }
        guard let first = records.first else { throw ImportError(file: file, "empty file: no CSV header") }
        header = first.1.map { $0.trimmingSpaces }
        lowercasedHeader = header.map { $0.lowercased() }
        rows = Array(records.dropFirst())
    }

    /// The index of the first column whose name matches one of `names` (case-insensitive), or nil.
    public func column(_ names: String...) -> Int? { column(names) }

    /// The index of the first column whose name matches one of `names` (case-insensitive), or nil.
    public func column(_ names: [String]) -> Int? {
        for name in names { if let i = lowercasedHeader.firstIndex(of: name.lowercased()) { return i } }
        return nil
    }
}

extension String {
    /// Without leading and trailing spaces and tabs.
    public var trimmingSpaces: String {
        // Fast path, no copy: a first or last character that is a space or a tab is that byte alone.
        guard let f = utf8.first, let l = utf8.last else { return self }
        if f != 0x20 && f != 0x09 && l != 0x20 && l != 0x09 { return self }
        var s = Substring(self)
        while let f = s.first, f == " " || f == "\t" { s = s.dropFirst() }
        while let l = s.last, l == " " || l == "\t" { s = s.dropLast() }
        return String(s)
    }
}

/// Field access for a row, with a clear reason when a value is missing or malformed.
public struct CSVRow {
    public let fields: [String]
    public init(_ fields: [String]) { self.fields = fields }

    /// The trimmed field at `index`, or nil when the column is absent, the row is short, or the field is
    /// empty or a missing-value marker (`NA`, `NaN`, `null`, `-999`, `-999.0`).
    public subscript(index: Int?) -> String? {
        guard let index, index < fields.count else { return nil }
        let v = fields[index].trimmingSpaces
        if v.isEmpty || CSVRow.isMissingMarker(v) { return nil }
        return v
    }

    /// The missing-value markers, lowercase.
    private static let missingMarkers: Set<String> = ["na", "nan", "null", "none", "-999", "-999.0", "-999.00"]

    /// True when `v` is a missing-value marker in any case. Only text of at most 7 UTF-8 bytes is lowercased
    /// and looked up: no longer text lowercases to a marker (the only non-ASCII character whose lowercase is
    /// ASCII is the Kelvin sign, to `k`, which no marker holds).
    static func isMissingMarker(_ v: String) -> Bool {
        v.utf8.count <= 7 && missingMarkers.contains(v.lowercased())
    }

    /// The field as a finite number, nil when missing; throws a reason when present but not a number.
    public func number(_ index: Int?, _ name: String) throws(ImportRowError) -> Double? {
        guard let s = self[index] else { return nil }
        guard let d = Double(s), d.isFinite else { throw ImportRowError("\(name) '\(s)' is not a number") }
        return d
    }
}

/// Why one row was skipped.
public struct ImportRowError: Error, Sendable {
    public let reason: String
    public init(_ reason: String) { self.reason = reason }
}
