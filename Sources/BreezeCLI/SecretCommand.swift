import BreezeCore
import BreezeCrypto
import BreezeSync
import Glibc

/// `breeze secret new` and `breeze secret derive`: secrets live in files, as hex, never on the command line.
enum SecretCommand {
    static let usage = """
        usage: breeze secret new                                  print a new cluster secret (64 hex digits)
               breeze secret derive --user ID --secret-file FILE  print the key of one user, for their devices
        """

    static func run(_ args: [String], _ ctx: Context) throws(CLIError) {
        let a = try Arguments(args, valued: ["secret-file"], usage: usage)
        guard let verb = a.positionals.first else { throw .usage("missing new or derive", usage) }
        switch verb {
        case "new":
            _ = try a.expect(["new"])
            ctx.console.out(Digest.hex(SecureRandom.bytes(32)))
        case "derive":
            _ = try a.expect(["derive"])
            guard ctx.userGiven else { throw .usage("derive needs --user ID", usage) }
            guard let file = a.options["secret-file"] else { throw .usage("derive needs --secret-file FILE", usage) }
            _ = try ctx.userStream()
            let secret = try readSecret(file)
            ctx.console.out(Digest.hex(Scope.userKey(clusterSecret: secret, user: ctx.user)))
        default:
            throw .usage("expected new or derive, not '\(verb)'", usage)
        }
    }

    /// Reads a secret file: hex digits (whitespace ignored), at least 16 bytes.
    static func readSecret(_ path: String) throws(CLIError) -> [UInt8] {
        guard let f = fopen(path, "r") else {
            throw .failure("--secret-file \(path): cannot read (\(String(cString: strerror(errno))))")
        }
        defer { fclose(f) }
        var text = [UInt8]()
        var buf = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = fread(&buf, 1, buf.count, f)
            if n <= 0 { break }
            text += buf[0..<n]
            if text.count > 4096 { throw .failure("--secret-file \(path): too large for a secret") }
        }
        let digits = text.filter { !($0 == 32 || $0 == 10 || $0 == 13 || $0 == 9) }
        guard digits.count % 2 == 0, digits.count >= 32,
              let bytes = hexBytes(digits) else {
            throw .failure("--secret-file \(path): expected at least 32 hex digits (make one with `breeze secret new`)")
        }
        return bytes
    }

    static func hexBytes(_ digits: [UInt8]) -> [UInt8]? {
        func v(_ c: UInt8) -> UInt8? {
            switch c {
            case 48...57: return c - 48
            case 97...102: return c - 87
            case 65...70: return c - 55
            default: return nil
            }
        }
        var out: [UInt8] = []
        var i = 0
        while i < digits.count {
            guard let hi = v(digits[i]), let lo = v(digits[i + 1]) else { return nil }
            out.append(hi << 4 | lo)
            i += 2
        }
        return out
    }
}
