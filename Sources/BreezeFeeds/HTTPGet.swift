internal import CCurl
@preconcurrency import Glibc

/// One HTTP GET by libcurl (HTTP/1.1 and TLS with the system's certificates): the status, the response headers
/// and the body, or the transport failure (timeout, refused, truncated body) as `HTTPGet.Failure`.
///
/// Bounded: a body larger than `maxBytes` stops the transfer (a provider, or something pretending to be one,
/// cannot make a server use unbounded memory).
struct HTTPGet {
    struct Response: Sendable {
        var status: Int
        /// Header names in lower case; the last value of a repeated header.
        var headers: [String: String]
        var body: [UInt8]
    }

    /// Why no response arrived: what the feed's log says, and whether trying again may help.
    struct Failure: Error, Sendable, CustomStringConvertible {
        var description: String
        var isTimeout: Bool
        /// Stopped by `shouldAbort` (the feed is stopping), not by the network.
        var isAborted = false
    }

    static let maxBytes = 64 << 20

    /// libcurl's process-wide initialisation, once, before the first handle.
    private static let initialised: CURLcode = curl_global_init(Int(CURL_GLOBAL_DEFAULT))

    /// GETs `url` with `headers` (`Name: value`), giving up after `timeoutMillis`, or as soon as `shouldAbort`
    /// says so (asked by libcurl about once a second, and more often while data flows).
    static func fetch(_ url: String, headers: [String], timeoutMillis: Int, shouldAbort: @escaping () -> Bool = { false }) throws(Failure) -> Response {
        _ = initialised
        guard let c = curl_easy_init() else { throw Failure(description: "libcurl could not start a transfer", isTimeout: false) }
        defer { curl_easy_cleanup(c) }
        let sink = Sink(shouldAbort: shouldAbort)
        let box = Unmanaged.passUnretained(sink).toOpaque()
        var list: UnsafeMutablePointer<curl_slist>?
        for h in headers { list = curl_slist_append(list, h) }
        defer { curl_slist_free_all(list) }
        var errorText = [CChar](repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        let rc: CURLcode = errorText.withUnsafeMutableBufferPointer { errorBuffer in
            _ = breeze_curl_set_string(c, CURLOPT_URL, url)
            _ = breeze_curl_set_long(c, CURLOPT_TIMEOUT_MS, timeoutMillis)
            _ = breeze_curl_set_long(c, CURLOPT_CONNECTTIMEOUT_MS, min(timeoutMillis, 10_000))
            _ = breeze_curl_set_long(c, CURLOPT_NOSIGNAL, 1)
            _ = breeze_curl_set_long(c, CURLOPT_FOLLOWLOCATION, 0)
            _ = breeze_curl_set_string(c, CURLOPT_ACCEPT_ENCODING, "")           // gzip and deflate, decoded by libcurl
            _ = breeze_curl_set_string(c, CURLOPT_USERAGENT, "breeze-feed/1")
            _ = breeze_curl_set_long(c, CURLOPT_PROTOCOLS, Int(CURLPROTO_HTTP | CURLPROTO_HTTPS))
            _ = breeze_curl_set_slist(c, CURLOPT_HTTPHEADER, list)
            _ = breeze_curl_set_pointer(c, CURLOPT_ERRORBUFFER, errorBuffer.baseAddress)
            _ = breeze_curl_set_pointer(c, CURLOPT_WRITEDATA, box)
            _ = breeze_curl_set_callback(c, CURLOPT_WRITEFUNCTION) { data, size, count, box in
                let sink = Unmanaged<Sink>.fromOpaque(box!).takeUnretainedValue()
                let n = size * count
                guard sink.body.count + n <= HTTPGet.maxBytes else { sink.oversize = true; return 0 }   // stops the transfer
                sink.body.append(contentsOf: UnsafeRawBufferPointer(start: data, count: n))
                return n
            }
            _ = breeze_curl_set_pointer(c, CURLOPT_XFERINFODATA, box)
            _ = breeze_curl_set_long(c, CURLOPT_NOPROGRESS, 0)
            _ = breeze_curl_set_xferinfo(c) { box, _, _, _, _ in
                let sink = Unmanaged<Sink>.fromOpaque(box!).takeUnretainedValue()
                if sink.shouldAbort() { sink.aborted = true; return 1 }       // ends the transfer: CURLE_ABORTED_BY_CALLBACK
                return 0
            }
            _ = breeze_curl_set_pointer(c, CURLOPT_HEADERDATA, box)
            _ = breeze_curl_set_callback(c, CURLOPT_HEADERFUNCTION) { data, size, count, box in
                let sink = Unmanaged<Sink>.fromOpaque(box!).takeUnretainedValue()
                let n = size * count
                let line = String(decoding: UnsafeRawBufferPointer(start: data, count: n), as: UTF8.self)
                if line.hasPrefix("HTTP/") { sink.headers.removeAll() }      // a new response (after a 100 Continue)
                if let colon = line.firstIndex(of: ":") {
                    let name = line[..<colon].lowercased()
                    sink.headers[name] = line[line.index(after: colon)...].trimmingCharacters(in: " \t\r\n")
                }
                return n
            }
            return curl_easy_perform(c)
        }
        guard rc == CURLE_OK else {
            let detail = String(decoding: errorText.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let what = detail.isEmpty ? String(cString: curl_easy_strerror(rc)) : detail
            if rc == CURLE_ABORTED_BY_CALLBACK, sink.aborted {
                throw Failure(description: "\(HTTPGet.redacted(url)): stopped before the answer came", isTimeout: false, isAborted: true)
            }
            if rc == CURLE_WRITE_ERROR, sink.oversize {
                throw Failure(description: "\(HTTPGet.redacted(url)): the response is larger than \(HTTPGet.maxBytes >> 20) MiB", isTimeout: false)
            }
            throw Failure(description: "\(HTTPGet.redacted(url)): \(what)", isTimeout: rc == CURLE_OPERATION_TIMEDOUT)
        }
        return Response(status: breeze_curl_response_code(c), headers: sink.headers, body: sink.body)
    }

    /// `url` without the values of query arguments that carry a key (`key`, `api_key`, `API_KEY`, `token`):
    /// what logs and errors show.
    static func redacted(_ url: String) -> String {
        guard let q = url.firstIndex(of: "?") else { return url }
        let args = url[url.index(after: q)...].split(separator: "&").map { arg -> String in
            let parts = arg.split(separator: "=", maxSplits: 1)
            let name = parts.first.map(String.init) ?? ""
            return ["key", "api_key", "apikey", "token"].contains(name.lowercased()) ? name + "=REDACTED" : String(arg)
        }
        return String(url[...q]) + args.joined(separator: "&")
    }

    /// What the callbacks fill (one transfer, on the calling thread).
    private final class Sink {
        var body: [UInt8] = []
        var headers: [String: String] = [:]
        var oversize = false
        let shouldAbort: () -> Bool
        var aborted = false
        init(shouldAbort: @escaping () -> Bool) { self.shouldAbort = shouldAbort }
    }
}

extension StringProtocol {
    func trimmingCharacters(in set: String) -> String {
        var s = Substring(self)
        while let f = s.first, set.contains(f) { s = s.dropFirst() }
        while let l = s.last, set.contains(l) { s = s.dropLast() }
        return String(s)
    }
}
