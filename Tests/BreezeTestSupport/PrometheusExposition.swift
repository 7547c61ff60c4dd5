/// The Prometheus text exposition format (version 0.0.4), parsed strictly: `# HELP` and `# TYPE` lines, then
/// samples `name{label="value",...} value` of a declared family (a histogram's as `_bucket`, `_sum`,
/// `_count`). Anything else is an error, so a malformed exposition fails the test.
public struct PrometheusExposition {
    public struct Sample: Equatable { public let name: String; public let labels: [String: String]; public let value: Double }
    public var types: [String: String] = [:]
    public var help: [String: String] = [:]
    public var samples: [Sample] = []

    public struct ParseError: Error, CustomStringConvertible { public let description: String }

    public init(_ text: String) throws {
        func isName(_ s: Substring) -> Bool {
            guard let f = s.first, f.isLetter || f == "_" || f == ":" else { return false }
            return s.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == ":") }
        }
        for (n, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() where !line.isEmpty {
            if line.hasPrefix("# HELP ") || line.hasPrefix("# TYPE ") {
                let rest = line.dropFirst(7)
                let name = rest.prefix { $0 != " " }, value = String(rest.dropFirst(name.count + 1))
                guard isName(name) else { throw ParseError(description: "line \(n + 1): bad metric name '\(name)'") }
                if line.hasPrefix("# TYPE ") {
                    guard ["counter", "gauge", "histogram", "summary", "untyped"].contains(value) else { throw ParseError(description: "line \(n + 1): type '\(value)'") }
                    guard types[String(name)] == nil else { throw ParseError(description: "line \(n + 1): \(name) typed twice") }
                    types[String(name)] = value
                } else { help[String(name)] = value }
                continue
            }
            guard !line.hasPrefix("#") else { continue }
            let name = line.prefix { $0 != "{" && $0 != " " }
            guard isName(name) else { throw ParseError(description: "line \(n + 1): bad sample name in '\(line)'") }
            var rest = line.dropFirst(name.count)
            var labels: [String: String] = [:]
            if rest.first == "{" {
                rest = rest.dropFirst()
                while rest.first != "}" {
                    let key = rest.prefix { $0 != "=" }
                    guard isName(key), rest.dropFirst(key.count).hasPrefix("=\"") else { throw ParseError(description: "line \(n + 1): bad label in '\(line)'") }
                    rest = rest.dropFirst(key.count + 2)
                    var value = "", escaped = false
                    while let c = rest.first {
                        rest = rest.dropFirst()
                        if escaped { value.append(c == "n" ? "\n" : c); escaped = false } else if c == "\\" { escaped = true } else if c == "\"" { break } else { value.append(c) }
                    }
                    labels[String(key)] = value
                    if rest.first == "," { rest = rest.dropFirst() }
                    guard !rest.isEmpty else { throw ParseError(description: "line \(n + 1): unterminated labels") }
                }
                rest = rest.dropFirst()
            }
            guard rest.first == " " else { throw ParseError(description: "line \(n + 1): no value in '\(line)'") }
            let valueText = rest.dropFirst().split(separator: " ").first.map(String.init) ?? ""
            let value: Double
            switch valueText {
            case "+Inf": value = .infinity
            case "-Inf": value = -.infinity
            case "NaN": value = .nan
            default:
                guard let v = Double(valueText) else { throw ParseError(description: "line \(n + 1): value '\(valueText)'") }
                value = v
            }
            let family = types[String(name)] != nil ? String(name)
                : ["_bucket", "_sum", "_count"].compactMap { s in name.hasSuffix(s) ? String(name.dropLast(s.count)) : nil }.first { types[$0] == "histogram" }
            guard let family, help[family] != nil else { throw ParseError(description: "line \(n + 1): sample \(name) of no declared family") }
            samples.append(Sample(name: String(name), labels: labels, value: value))
        }
        // Histograms: buckets by increasing `le`, cumulative, the last +Inf equal to the count.
        for (family, type) in types where type == "histogram" {
            let buckets = samples.filter { $0.name == family + "_bucket" }
            let bounds = buckets.map { $0.labels["le"] == "+Inf" ? Double.infinity : Double($0.labels["le"] ?? "") ?? .nan }
            guard bounds == bounds.sorted(), bounds.last == .infinity,
                  zip(buckets, buckets.dropFirst()).allSatisfy({ $0.value <= $1.value }),
                  buckets.last?.value == samples.first(where: { $0.name == family + "_count" })?.value else {
                throw ParseError(description: "histogram \(family): buckets not cumulative or +Inf differs from the count")
            }
        }
    }

    public func value(_ name: String, _ labels: [String: String] = [:]) -> Double? {
        samples.first { s in s.name == name && labels.allSatisfy { k, v in s.labels[k] == v } }?.value
    }
}

