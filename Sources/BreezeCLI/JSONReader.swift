import BreezeCore

/// A small JSON reader into `JSONValue` (object keys in document order), for read models this build wrote.
struct JSONReader {
    struct Failure: Error, CustomStringConvertible { let description: String }

    private let bytes: [UInt8]
    private var i = 0

    /// Parses one JSON document.
    static func parse(_ text: String) throws(Failure) -> JSONValue {
        var r = JSONReader(bytes: Array(text.utf8))
        let v = try r.value()
        r.space()
        guard r.i == r.bytes.count else { throw Failure(description: "trailing characters at offset \(r.i)") }
        return v
    }

    private init(bytes: [UInt8]) { self.bytes = bytes }

    private mutating func space() {
        while i < bytes.count, [0x20, 0x0A, 0x0D, 0x09].contains(bytes[i]) { i += 1 }
    }

    private mutating func expect(_ word: String) throws(Failure) {
        let w = Array(word.utf8)
        guard i + w.count <= bytes.count, Array(bytes[i..<(i + w.count)]) == w else {
            throw Failure(description: "expected \(word) at offset \(i)")
        }
        i += w.count
    }

    private mutating func value() throws(Failure) -> JSONValue {
        space()
        guard i < bytes.count else { throw Failure(description: "unexpected end") }
        switch bytes[i] {
        case UInt8(ascii: "{"):
            i += 1
            var pairs: [(String, JSONValue)] = []
            space()
            if i < bytes.count, bytes[i] == UInt8(ascii: "}") { i += 1; return .object(pairs) }
            while true {
                space()
                let k = try string()
                space()
                try expect(":")
                pairs.append((k, try value()))
                space()
                guard i < bytes.count else { throw Failure(description: "unterminated object") }
                if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
                try expect("}")
                return .object(pairs)
            }
        case UInt8(ascii: "["):
            i += 1
            var items: [JSONValue] = []
            space()
            if i < bytes.count, bytes[i] == UInt8(ascii: "]") { i += 1; return .array(items) }
            while true {
                items.append(try value())
                space()
                guard i < bytes.count else { throw Failure(description: "unterminated array") }
                if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
                try expect("]")
                return .array(items)
            }
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try expect("true"); return .bool(true)
        case UInt8(ascii: "f"): try expect("false"); return .bool(false)
        case UInt8(ascii: "n"): try expect("null"); return .null
        default: return try number()
        }
    }

    private mutating func number() throws(Failure) -> JSONValue {
        let start = i
        var isInteger = true
        while i < bytes.count, let c = Optional(bytes[i]),
              (c >= 0x30 && c <= 0x39) || c == UInt8(ascii: "-") || c == UInt8(ascii: "+") || c == UInt8(ascii: ".")
                || c == UInt8(ascii: "e") || c == UInt8(ascii: "E") {
            if !(c >= 0x30 && c <= 0x39) && c != UInt8(ascii: "-") { isInteger = false }
            i += 1
        }
        let text = String(decoding: bytes[start..<i], as: UTF8.self)
        if isInteger, let n = Int64(text) { return .int(n) }
        guard let d = Double(text) else { throw Failure(description: "bad number '\(text)' at offset \(start)") }
        return .double(d)
    }

    private mutating func string() throws(Failure) -> String {
        try expect("\"")
        var out: [UInt8] = []
        while i < bytes.count {
            let c = bytes[i]
            i += 1
            if c == UInt8(ascii: "\"") { return String(decoding: out, as: UTF8.self) }
            guard c == UInt8(ascii: "\\") else { out.append(c); continue }
            guard i < bytes.count else { break }
            let e = bytes[i]
            i += 1
            switch e {
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "u"):
                guard i + 4 <= bytes.count, var u = UInt32(String(decoding: bytes[i..<(i + 4)], as: UTF8.self), radix: 16) else {
                    throw Failure(description: "bad \\u escape at offset \(i)")
                }
                i += 4
                if (0xD800..<0xDC00).contains(u), i + 6 <= bytes.count, bytes[i] == UInt8(ascii: "\\"),
                   let lo = UInt32(String(decoding: bytes[(i + 2)..<(i + 6)], as: UTF8.self), radix: 16),
                   (0xDC00..<0xE000).contains(lo) {
                    u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00)
                    i += 6
                }
                out += Array(String(Unicode.Scalar(u).map(Character.init) ?? "\u{FFFD}").utf8)
            default: out.append(e)
            }
        }
        throw Failure(description: "unterminated string")
    }
}
