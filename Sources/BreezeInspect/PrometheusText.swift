/// The Prometheus text exposition format, version 0.0.4
/// (https://prometheus.io/docs/instrumenting/exposition_formats/): each metric family as `# HELP` and
/// `# TYPE` lines followed by its samples, `name{label="value",...} value`.
///
/// ```swift
/// var p = PrometheusText()
/// p.family("breeze_node_peers_connected", .gauge, help: "Authenticated peer sessions.", [([], 2)])
/// print(p.text)
/// ```
public struct PrometheusText: Sendable {
    /// The metric types this writer emits.
    public enum Kind: String, Sendable { case counter, gauge, histogram }

    /// The `Content-Type` of the format.
    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    /// The exposition so far.
    public private(set) var text = ""

    /// An empty exposition.
    public init() {}

    /// Appends one family: its help text, its type and its samples (label pairs and value). A histogram's
    /// samples are given with their suffixed names through `samples(_:)` instead.
    public mutating func family(_ name: String, _ kind: Kind, help: String, _ samples: [([(String, String)], Double)]) {
        header(name, kind, help: help)
        for (labels, value) in samples { sample(name, labels, value) }
    }

    /// Appends a histogram: per bucket upper bound its cumulative count (the last is `+Inf`, equal to
    /// `count`), then `_sum` and `_count`. `counts` are per bucket, not cumulative, one more than `bounds`.
    public mutating func histogram(_ name: String, help: String, bounds: [Double], counts: [UInt64], sum: Double) {
        header(name, .histogram, help: help)
        var cumulative: UInt64 = 0
        for (i, n) in counts.enumerated() {
            cumulative += n
            sample(name + "_bucket", [("le", i < bounds.count ? PrometheusText.number(bounds[i]) : "+Inf")], Double(cumulative))
        }
        sample(name + "_sum", [], sum)
        sample(name + "_count", [], Double(cumulative))
    }

    private mutating func header(_ name: String, _ kind: Kind, help: String) {
        text += "# HELP \(name) \(PrometheusText.escape(help, quote: false))\n# TYPE \(name) \(kind.rawValue)\n"
    }

    private mutating func sample(_ name: String, _ labels: [(String, String)], _ value: Double) {
        text += name
        if !labels.isEmpty {
            text += "{" + labels.map { "\($0.0)=\"\(PrometheusText.escape($0.1))\"" }.joined(separator: ",") + "}"
        }
        text += " \(PrometheusText.number(value))\n"
    }

    /// A label value escaped: backslash, double quote and line feed (help text: without the quote).
    static func escape(_ v: String, quote: Bool = true) -> String {
        var out = ""
        for c in v {
            switch c {
            case "\\": out += "\\\\"
            case "\"" where quote: out += "\\\""
            case "\n": out += "\\n"
            default: out.append(c)
            }
        }
        return out
    }

    /// A sample value: whole numbers without a fraction, `+Inf`, `-Inf`, `NaN`.
    static func number(_ v: Double) -> String {
        if v.isNaN { return "NaN" }
        if v.isInfinite { return v > 0 ? "+Inf" : "-Inf" }
        if v == v.rounded(), abs(v) < 1e15 { return String(Int64(v)) }
        return String(v)
    }
}
