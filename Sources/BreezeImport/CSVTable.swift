/// A CSV file (RFC 4180: commas, double-quoted fields with "" escapes, CRLF or LF) as a header and rows,
/// with 1-based line numbers for error reports. Columns are found by name, case-insensitively, in any order.
public struct CSVTable: Sendable {
    /// Header names as written (quotes removed, surrounding spaces trimmed).
    public let header: [String]
    /// Data rows: the line each starts on, and its fields.
    public let rows: [(line: Int, fields: [String])]

    /// Parses CSV text; the first non-empty line is the header. Throws when there is no header or a quote
    /// is never closed.
    public init(_ bytes: [UInt8], file: String) throws(ImportError) {
        var records: [(Int, [String])] = []
        var field: [UInt8] = []
        var fields: [String] = []
        var inQuotes = false
        var line = 1, recordLine = 1
        var i = 0
        let n = bytes.count
        var start = 0
        if n >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF { start = 3 }   // UTF-8 BOM
        i = start
        func endField() {
            fields.append(String(decoding: field, as: UTF8.self))
            field.removeAll(keepingCapacity: true)
        }
        while i < n {
            let b = bytes[i]
            if inQuotes {
                if b == 0x22 {
                    if i + 1 < n && bytes[i + 1] == 0x22 { field.append(0x22); i += 1 } else { inQuotes = false }
                } else {
                    if b == 0x0A { line += 1 }
                    field.append(b)
                }
            } else if b == 0x22 && field.isEmpty {
                inQuotes = true
            } else if b == 0x2C {
                endField()
            } else if b == 0x0A || b == 0x0D {
                if b == 0x0D && i + 1 < n && bytes[i + 1] == 0x0A { i += 1 }
                endField()
                if !(fields.count == 1 && fields[0].isEmpty) { records.append((recordLine, fields)) }
                fields.removeAll(keepingCapacity: true)
                line += 1
                recordLine = line
            } else {
                field.append(b)
            }
            i += 1
        }
        if inQuotes { throw ImportError(file: file, "line \(recordLine): a quoted field is never closed") }
        if !field.isEmpty || !fields.isEmpty {
            endField()
            records.append((recordLine, fields))
        }
        guard let first = records.first else { throw ImportError(file: file, "empty file: no CSV header") }
        header = first.1.map { $0.trimmingSpaces }
        rows = Array(records.dropFirst())
    }

    /// The index of the first column whose name matches one of `names` (case-insensitive), or nil.
    public func column(_ names: String...) -> Int? { column(names) }

    /// The index of the first column whose name matches one of `names` (case-insensitive), or nil.
    public func column(_ names: [String]) -> Int? {
        let lower = header.map { $0.lowercased() }
        for name in names { if let i = lower.firstIndex(of: name.lowercased()) { return i } }
        return nil
    }
}

extension String {
    /// Without leading and trailing spaces and tabs.
    public var trimmingSpaces: String {
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
        if v.isEmpty || ["na", "nan", "null", "none", "-999", "-999.0", "-999.00"].contains(v.lowercased()) { return nil }
        return v
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
