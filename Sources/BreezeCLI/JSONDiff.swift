import BreezeCore

/// A structural diff of two JSON documents (read models), for `breeze replay --step`: the paths added,
/// removed or changed, as JSON Pointers (RFC 6901, e.g. `/favourites/0/aqi`). Objects are compared key by key
/// and arrays index by index.
enum JSONDiff {
    /// One difference.
    struct Change: Equatable {
        enum Kind: String { case added, removed, changed }
        let kind: Kind
        let path: String
        let old: JSONValue?
        let new: JSONValue?

        /// `~ /path: old -> new`, `+ /path: new`, `- /path: old`.
        var text: String {
            switch kind {
            case .added: return "+ \(path): \(new!.text)"
            case .removed: return "- \(path): \(old!.text)"
            case .changed: return "~ \(path): \(old!.text) -> \(new!.text)"
            }
        }

        var json: JSONValue {
            var pairs: [(String, JSONValue)] = [("op", .string(kind.rawValue)), ("path", .string(path))]
            if let old { pairs.append(("old", old)) }
            if let new { pairs.append(("new", new)) }
            return .object(pairs)
        }
    }

    /// The changes from `a` to `b`, in document order.
    static func changes(from a: JSONValue?, to b: JSONValue?, path: String = "") -> [Change] {
        var out: [Change] = []
        walk(a, b, path, &out)
        return out
    }

    private static func walk(_ a: JSONValue?, _ b: JSONValue?, _ path: String, _ out: inout [Change]) {
        switch (a, b) {
        case (nil, nil): return
        case (nil, let y?): out.append(Change(kind: .added, path: path.isEmpty ? "/" : path, old: nil, new: y))
        case (let x?, nil): out.append(Change(kind: .removed, path: path.isEmpty ? "/" : path, old: x, new: nil))
        case (.object(let x)?, .object(let y)?):
            let ym = Dictionary(y, uniquingKeysWith: { f, _ in f })
            let xm = Dictionary(x, uniquingKeysWith: { f, _ in f })
            for (k, v) in x { walk(v, ym[k], path + "/" + escape(k), &out) }
            for (k, v) in y where xm[k] == nil { walk(nil, v, path + "/" + escape(k), &out) }
        case (.array(let x)?, .array(let y)?):
            for i in 0..<max(x.count, y.count) {
                walk(i < x.count ? x[i] : nil, i < y.count ? y[i] : nil, path + "/\(i)", &out)
            }
        case (let x?, let y?):
            if x != y { out.append(Change(kind: .changed, path: path.isEmpty ? "/" : path, old: x, new: y)) }
        }
    }

    private static func escape(_ key: String) -> String {
        key.replacingAll("~", with: "~0").replacingAll("/", with: "~1")
    }
}

extension String {
    func replacingAll(_ a: Character, with b: String) -> String {
        guard contains(a) else { return self }
        var out = ""
        for c in self { if c == a { out += b } else { out.append(c) } }
        return out
    }
}
