/// The arguments of one command after the global options were taken out: positionals and `--name value`
/// options, checked against what the command accepts.
public struct Arguments {
    public var positionals: [String] = []
    public var options: [String: String] = [:]
    /// Values of options that may be repeated (`--peer A --peer B`).
    public var repeated: [String: [String]] = [:]
    public let usage: String

    /// Splits `args`. `valued` lists the options that take a value, `flags` those that do not.
    public init(_ args: [String], valued: Set<String> = [], flags: Set<String> = [], multi: Set<String> = [],
         usage: String) throws(CLIError) {
        self.usage = usage
        var i = 0
        while i < args.count {
            let a = args[i]
            if a.hasPrefix("--") && a.count > 2 {
                var name = String(a.dropFirst(2)), value: String?
                if let eq = name.firstIndex(of: "=") {
                    value = String(name[name.index(after: eq)...])
                    name = String(name[..<eq])
                }
                if multi.contains(name) {
                    if value == nil {
                        guard i + 1 < args.count else { throw .usage("option --\(name) needs a value", usage) }
                        i += 1
                        value = args[i]
                    }
                    repeated[name, default: []].append(value!)
                } else if valued.contains(name) {
                    if value == nil {
                        guard i + 1 < args.count else { throw .usage("option --\(name) needs a value", usage) }
                        i += 1
                        value = args[i]
                    }
                    guard options[name] == nil else { throw .usage("option --\(name) given twice", usage) }
                    options[name] = value
                } else if flags.contains(name), value == nil {
                    options[name] = "true"
                } else {
                    throw .usage("unknown option --\(name)", usage)
                }
            } else {
                positionals.append(a)
            }
            i += 1
        }
    }

    /// Exactly `names.count` positionals, or a usage error naming what is missing or extra.
    public func expect(_ names: [String]) throws(CLIError) -> [String] {
        if positionals.count < names.count {
            throw .usage("missing \(names[positionals.count])", usage)
        }
        if positionals.count > names.count {
            throw .usage("unexpected argument '\(positionals[names.count])'", usage)
        }
        return positionals
    }
}

extension Arguments {
    /// The positive whole number `s` (`1_000` and `1,000` allowed), or `d` when absent.
    ///
    /// - Throws: a failure naming the option when `s` is not a positive whole number.
    public static func positive(_ s: String?, _ name: String, default d: Int) throws(CLIError) -> Int {
        guard let s else { return d }
        guard let n = Int(String(s.filter { $0 != "_" && $0 != "," })), n > 0 else {
            throw .failure("\(name) '\(s)': expected a positive whole number")
        }
        return n
    }
}
