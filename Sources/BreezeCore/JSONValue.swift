/// A JSON value with keys kept in the order they were written, serialised deterministically. Used only for
/// display and export (`--json`); the log itself is binary.
public indirect enum JSONValue: Equatable, Sendable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])

    /// Compact one-line JSON text.
    public var text: String {
        var out = ""
        write(to: &out)
        return out
    }

    /// Appends the compact JSON text to `out`.
    public func write(to out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .int(let i): out += String(i)
        case .double(let d):
            if d.isFinite {
                if d == d.rounded(.towardZero) && abs(d) < 1e15 { out += String(Int64(d)) } else { out += "\(d)" }
            } else { out += "null" }
        case .string(let s): JSONValue.quote(s, into: &out)
        case .array(let items):
            out += "["
            for (i, v) in items.enumerated() {
                if i > 0 { out += "," }
                v.write(to: &out)
            }
            out += "]"
        case .object(let pairs):
            out += "{"
            for (i, (k, v)) in pairs.enumerated() {
                if i > 0 { out += "," }
                JSONValue.quote(k, into: &out)
                out += ":"
                v.write(to: &out)
            }
            out += "}"
        }
    }

    static func quote(_ s: String, into out: inout String) {
        out += "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where u.value < 0x20:
                let h = String(u.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - h.count) + h
            default: out.unicodeScalars.append(u)
            }
        }
        out += "\""
    }

    public static func == (a: JSONValue, b: JSONValue) -> Bool { a.text == b.text }

    /// Optional helpers: a missing value becomes `null`.
    public static func string(_ s: String?) -> JSONValue { s.map(JSONValue.string) ?? .null }
    public static func double(_ d: Double?) -> JSONValue { d.map(JSONValue.double) ?? .null }
}
