public import BreezeCore

extension EventLog {
    /// The stored event with `id` in `stream`, or nil when it is not held. (For telling a duplicate from a
    /// conflict before ingesting, and for tools that name one event.)
    ///
    /// - Throws: `StoreError.corrupt` when the stored bytes do not decode.
    public func event(_ id: EventID, in stream: StreamID) throws(StoreError) -> Event? {
        do {
            guard let key = try streamKey(stream, create: false) else { return nil }
            let q = try db.cached("SELECT data FROM events WHERE stream = ? AND origin = ? AND epoch = ? AND counter = ?")
            try q.bind(1, key)
            try q.bind(2, Int64(bitPattern: id.origin.replica.rawValue))
            try q.bind(3, Int64(id.origin.epoch))
            try q.bind(4, Int64(bitPattern: id.counter))
            guard let data = try q.first({ $0.blob(0) }) else { return nil }
            return try Event(decoding: data, stored: true)
        } catch let e as DecodingError {
            throw StoreError(.corrupt, "\(path): stored event \(id) of \(stream) does not decode (\(e)); run `breeze verify`")
        } catch { throw StoreError.from(error, path: path) }
    }
}
