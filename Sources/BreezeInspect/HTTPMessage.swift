import BreezeCore

/// One HTTP request as the server's handler sees it: the method, the path (without the query) and the query's
/// arguments, URL-decoded by libmicrohttpd.
public struct HTTPRequest: Sendable {
    /// `GET`, `HEAD`, ...
    public var method: String
    /// The path, e.g. `/api/screen/detail`.
    public var path: String
    /// The query's arguments (`?sensor=149970&until=120`); the access token is among them.
    public var query: [String: String]

    /// A request from its parts (tests build them to call a handler directly).
    public init(method: String = "GET", path: String, query: [String: String] = [:]) {
        self.method = method
        self.path = path
        self.query = query
    }
}

/// What a handler answers: a status, a content type and a body, or a stream of server-sent events.
public struct HTTPResponse: Sendable {
    /// The status code (200, 400, 403, 404, ...).
    public var status: Int
    /// The `Content-Type` header.
    public var contentType: String
    /// The body (empty for a stream).
    public var body: [UInt8]
    /// When set, the response is `text/event-stream` and its body is what this subscription yields until it
    /// ends or the client goes away.
    public var stream: EventStream.Subscription?

    /// A response with a body.
    public init(status: Int = 200, contentType: String, body: [UInt8]) {
        self.status = status
        self.contentType = contentType
        self.body = body
        stream = nil
    }

    /// A UTF-8 text response (`text/plain` unless another type is given).
    public static func text(_ s: String, status: Int = 200, contentType: String = "text/plain; charset=utf-8") -> HTTPResponse {
        HTTPResponse(status: status, contentType: contentType, body: Array(s.utf8))
    }

    /// A JSON response whose body is `json` (already encoded).
    public static func json(_ json: String, status: Int = 200) -> HTTPResponse {
        text(json, status: status, contentType: "application/json; charset=utf-8")
    }

    /// A JSON error `{"error": message}` with `status`.
    public static func error(_ message: String, status: Int) -> HTTPResponse {
        json(JSONValue.object([("error", .string(message))]).text, status: status)
    }

    /// A server-sent event stream fed by `subscription`.
    public static func events(_ subscription: EventStream.Subscription) -> HTTPResponse {
        var r = HTTPResponse(status: 200, contentType: "text/event-stream", body: [])
        r.stream = subscription
        return r
    }
}

/// Why a server could not start: a malformed address, a port in use, an address not on this machine; one
/// line for a person.
public struct HTTPServerError: Error, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
