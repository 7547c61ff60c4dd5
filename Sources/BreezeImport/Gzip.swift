internal import CZlib

/// Transparent gzip: `maybeInflate` returns the bytes unchanged unless they start with the gzip magic
/// (1f 8b), in which case they are decompressed with zlib.
public enum Gzip {
    /// True when the bytes are gzip-compressed.
    public static func isGzip(_ bytes: [UInt8]) -> Bool { bytes.count >= 2 && bytes[0] == 0x1f && bytes[1] == 0x8b }

    /// Decompresses gzip data; other data is returned as it is. Output is capped at `limit` bytes.
    public static func maybeInflate(_ bytes: [UInt8], file: String, limit: Int = 1 << 30) throws(ImportError) -> [UInt8] {
        guard isGzip(bytes) else { return bytes }
        var stream = z_stream()
        guard breeze_inflate_init_gzip(&stream) == Z_OK else { throw ImportError(file: file, "cannot start gzip decompression") }
        defer { inflateEnd(&stream) }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        var input = bytes
        var status: Int32 = Z_OK
        input.withUnsafeMutableBufferPointer { inp in
            stream.next_in = inp.baseAddress
            stream.avail_in = UInt32(inp.count)
            repeat {
                chunk.withUnsafeMutableBufferPointer { c in
                    stream.next_out = c.baseAddress
                    stream.avail_out = UInt32(c.count)
                    status = inflate(&stream, Z_NO_FLUSH)
                    out.append(contentsOf: c[0..<(c.count - Int(stream.avail_out))])
                }
                // Several gzip members one after another (`cat a.gz b.gz`, pigz, bgzip): go on with the next.
                if status == Z_STREAM_END && stream.avail_in > 0 && stream.next_in.pointee == 0x1f {
                    status = inflateReset(&stream)
                }
            } while status == Z_OK && out.count <= limit
        }
        guard status == Z_STREAM_END, stream.avail_in == 0 else {
            if status == Z_STREAM_END { throw ImportError(file: file, "\(stream.avail_in) bytes of trailing garbage after the gzip data") }
            throw ImportError(file: file, out.count > limit ? "decompressed data exceeds \(limit) bytes" : "corrupt gzip data (zlib status \(status))")
        }
        return out
    }
}
