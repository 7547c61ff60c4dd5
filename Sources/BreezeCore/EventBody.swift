import BreezeCrypto

/// The typed content of an event. Each case has a type name and a schema version (version 1 for all of
/// them in this build); payload layouts are in `Protocol/encoding.md`, "Event types".
///
/// A type or version this build does not know decodes as `.unknown` with its bytes intact: it is stored
/// and relayed unchanged, and reducers and projections skip it.
public enum EventBody: Hashable, Sendable {
    // user:<id>
    case favouriteAdd(sensor: String)
    /// Removes the adds this replica had observed (`observed` are their event ids); a concurrent add wins.
    case favouriteRemove(sensor: String, observed: [EventID])
    case watchAdd(sensor: String)
    case watchRemove(sensor: String, observed: [EventID])
    case alertSet(AlertChange)
    case unitSet(TemperatureUnit)
    case sourceEnable(source: String)
    case sourceDisable(source: String)
    case sourceCorrect(source: String, correction: String)
    case biomarkerTarget(BiomarkerTarget)
    case testAlert(sensor: String?)
    /// A device notified the user of an alert (`key`: `AlertsScreen`'s key of a crossing or of a test alert),
    /// so the user's other devices do not notify again.
    case alertDelivered(key: String)
    /// A device asks for a new certificate before its own expires (`device.renew`).
    case renewalRequest(RenewalRequest)
    /// An authority's new certificate chain for a device, device certificate first (`device.certificate`):
    /// the answer to a `device.renew`, installed by that device's node.
    case certificateIssued(chain: [[UInt8]])
    // public
    case sensorRegistered(SensorRegistration)
    case reading(Reading)
    /// Many readings of one sensor (what imports store).
    case readingBlock(ReadingBlock)
    /// A server's merge of its own small reading events of one sensor (`reading.compact`): the same facts with
    /// their original stamps, replacing the events it names.
    case readingCompaction(ReadingCompaction)
    /// A server's hours of a sensor summed up under the retention policy (`reading.rollup`), replacing the raw
    /// events of its origin they came from.
    case readingRollup(ReadingRollup)
    /// The cluster's retention policy, signed by the cluster authority (`retention.policy`, `public`).
    case retentionPolicy(RetentionPolicy)
    case pollenForecast(PollenForecast)
    case dailyTemperature(DailyTemperature)
    // health:<id>
    case biomarkerReading(BiomarkerReading)
    /// An authority revoked a key (`device.revoke`, `public`): nodes that trust the signer refuse it.
    case revocation(Revocation)
    /// Written by a newer build: kept byte for byte.
    case unknown(type: String, version: UInt16, payload: [UInt8])

    /// Which kind of stream a type belongs in.
    ///
    /// `public` types go in `public`; those with a partition (`EventBody.partition`) may also go in their
    /// kind of fact stream: readings in `sensor:`, forecasts in `pollen:`, temperatures in `climate:`.
    public enum StreamKind: Sendable, Equatable { case user, `public`, health, any, sensorFacts, pollenFacts, climateFacts }

    /// Every type name this build knows, with its current schema version.
    public static let knownTypes: [String: UInt16] = [
        "favourite.add": 1, "favourite.remove": 1, "watch.add": 1, "watch.remove": 1, "alert.set": 1,
        "unit.set": 1, "source.enable": 1, "source.disable": 1, "source.correct": 1, "biomarker.target": 1,
        "alert.test": 1, "alert.delivered": 1, "sensor.register": 1, "reading": 1, "reading.block": 1, "reading.compact": 1, "reading.rollup": 1, "retention.policy": 1, "pollen.forecast": 1, "temperature.daily": 1,
        "biomarker.reading": 1, "device.revoke": 1, "device.renew": 1, "device.certificate": 1,
    ]

    /// The type name.
    public var type: String {
        switch self {
        case .favouriteAdd: return "favourite.add"
        case .favouriteRemove: return "favourite.remove"
        case .watchAdd: return "watch.add"
        case .watchRemove: return "watch.remove"
        case .alertSet: return "alert.set"
        case .unitSet: return "unit.set"
        case .sourceEnable: return "source.enable"
        case .sourceDisable: return "source.disable"
        case .sourceCorrect: return "source.correct"
        case .biomarkerTarget: return "biomarker.target"
        case .testAlert: return "alert.test"
        case .alertDelivered: return "alert.delivered"
        case .renewalRequest: return "device.renew"
        case .certificateIssued: return "device.certificate"
        case .sensorRegistered: return "sensor.register"
        case .reading: return "reading"
        case .readingBlock: return "reading.block"
        case .readingCompaction: return "reading.compact"
        case .readingRollup: return "reading.rollup"
        case .retentionPolicy: return "retention.policy"
        case .pollenForecast: return "pollen.forecast"
        case .dailyTemperature: return "temperature.daily"
        case .biomarkerReading: return "biomarker.reading"
        case .revocation: return "device.revoke"
        case .unknown(let t, _, _): return t
        }
    }

    /// The stream kind this body may be written to.
    public var streamKind: StreamKind { EventBody.kinds[type] ?? .any }

    private static let kinds: [String: StreamKind] = [
        "favourite.add": .user, "favourite.remove": .user, "watch.add": .user, "watch.remove": .user,
        "alert.set": .user, "unit.set": .user, "source.enable": .user, "source.disable": .user,
        "source.correct": .user, "biomarker.target": .user, "alert.test": .user, "alert.delivered": .user,
        "sensor.register": .public,
        "reading": .sensorFacts, "reading.block": .sensorFacts, "reading.compact": .sensorFacts, "reading.rollup": .sensorFacts, "retention.policy": .public, "pollen.forecast": .pollenFacts,
        "temperature.daily": .climateFacts, "biomarker.reading": .health,
        "device.revoke": .public, "device.renew": .user, "device.certificate": .user,
    ]

    /// True when an event of this type name may be in `stream`; unknown types may be anywhere (they are
    /// relayed, not interpreted).
    public static func type(_ type: String, belongsIn stream: StreamID) -> Bool {
        switch (kinds[type] ?? .any, stream) {
        case (.any, _), (.user, .user), (.public, .public), (.health, .health): return true
        case (.sensorFacts, .public), (.sensorFacts, .sensor), (.pollenFacts, .public), (.pollenFacts, .pollen),
             (.climateFacts, .public), (.climateFacts, .climate): return true
        default: return false
        }
    }

    /// True when the body may be appended to `stream`.
    public func belongs(in stream: StreamID) -> Bool { EventBody.type(type, belongsIn: stream) }

    /// Type name, schema version and payload bytes.
    public func encode() -> (type: String, version: UInt16, payload: [UInt8]) {
        if case .unknown(let t, let v, let p) = self { return (t, v, p) }
        var w = ByteWriter(capacity: 128)
        let (type, version) = encodePayload(into: &w)
        return (type, version, w.bytes)
    }

    /// Appends the payload bytes to `w` (a buffer the caller reuses, so appending a batch allocates no
    /// payload per event) and returns the type name and schema version.
    public func encodePayload(into w: inout ByteWriter) -> (type: String, version: UInt16) {
        switch self {
        case .favouriteAdd(let s), .watchAdd(let s), .sourceEnable(let s), .sourceDisable(let s):
            w.string(s)
        case .favouriteRemove(let s, let observed), .watchRemove(let s, let observed):
            w.string(s)
            w.array(observed) { w, id in id.encode(into: &w) }
        case .alertSet(let c):
            w.u8(c.category?.rawValue ?? 0)
            w.u8(c.onClear?.rawValue ?? 0)
            w.u8(c.enabled.map { $0 ? 2 : 1 } ?? 0)
        case .unitSet(let u): w.u8(u.rawValue)
        case .sourceCorrect(let s, let c): w.string(s); w.string(c)
        case .biomarkerTarget(let t):
            w.string(t.readingType); w.f64(t.minReading); w.f64(t.maxReading); w.string(t.icon)
        case .testAlert(let s): w.optionalString(s)
        case .alertDelivered(let k): w.string(k)
        case .renewalRequest(let r): r.encode(into: &w)
        case .certificateIssued(let chain): w.array(chain) { w, c in w.blob(c) }
        case .sensorRegistered(let r):
            w.string(r.sensor); w.string(r.name); w.string(r.source); w.string(r.kind)
            w.optionalF64(r.latitude); w.optionalF64(r.longitude); w.optionalString(r.timeZone)
        case .reading(let r):
            w.string(r.source); w.string(r.sensor); w.zigzag(r.time)
            w.array(r.values) { w, m in w.string(m.quantity); w.f64(m.value) }
        case .readingBlock(let b): b.encode(into: &w)
        case .readingCompaction(let c): c.encode(into: &w)
        case .readingRollup(let r): r.encode(into: &w)
        case .retentionPolicy(let p): p.encode(into: &w)
        case .pollenForecast(let p):
            w.f64(p.latitude); w.f64(p.longitude); w.optionalString(p.regionCode); w.string(p.date)
            w.array(p.entries) { w, e in
                w.string(e.code); w.string(e.displayName); w.bool(e.isPlant); w.optionalString(e.plantType)
                w.u8(e.inSeason.map { $0 ? 2 : 1 } ?? 0)
                w.u8(e.indexValue.map { $0 &+ 1 } ?? 0)
                w.optionalString(e.category); w.optionalString(e.indexDescription); w.optionalString(e.colour)
                w.array(e.healthRecommendations) { w, s in w.string(s) }
                for s in [e.family, e.season, e.specialColors, e.specialShapes, e.crossReaction, e.picture,
                          e.pictureCloseup] { w.optionalString(s) }
            }
        case .dailyTemperature(let t):
            w.string(t.station); w.string(t.date); w.optionalF64(t.maxC); w.optionalF64(t.minC)
            w.optionalF64(t.latitude); w.optionalF64(t.longitude)
        case .biomarkerReading(let b):
            w.string(b.readingType); w.zigzag(b.time); w.f64(b.value); w.string(b.unit)
        case .revocation(let r): r.encode(into: &w)
        case .unknown(let t, let v, let p):
            w.raw(p)
            return (t, v)
        }
        return (type, 1)
    }

    /// A `reading` payload decoded straight to what the facts projection keeps (its finite values, labelled),
    /// without building `Reading` and `Measurement`s; nil whenever `decode` would not give a `.reading` (another
    /// type or version, or a malformed payload). The layout is the `reading` case of `decode`;
    /// `CodecTests.theReadingFastPathAgreesWithDecode` checks that they agree.
    public static func readingValues(type: String, version: UInt16, payload: [UInt8])
        -> (source: String, sensor: String, time: Int64, values: [(quantity: String, value: Double)])? {
        readingValues(type: type, version: version, reader: ByteReader(payload))
    }

    /// The readings of a `reading`, `reading.block` or `reading.compact` event, straight from the payload where it lies (the
    /// projection's fast path): source, sensor and each time's finite values; nil for any other event, or one
    /// whose payload does not decode.
    public static func readingRows(of e: Event)
        -> (source: String, sensor: String, rows: [(time: Int64, values: [(quantity: String, value: Double)])])? {
        if let r = readingValues(of: e) { return (r.source, r.sensor, [(r.time, r.values)]) }
        guard knownTypes[e.type] == e.schemaVersion else { return nil }
        if e.type == "reading.block" { return ReadingBlock.rowValues(e.payloadReader) }
        guard let c = compactionRows(of: e) else { return nil }
        return (c.source, c.sensor, c.rows.map { ($0.time, $0.values) })
    }

    /// The rows of a `reading.compact` event with the counter and timestamp of the event each came from (the
    /// projection's path: a row's stamp is that event's); nil for any other event, or one that does not decode.
    public static func compactionRows(of e: Event)
        -> (source: String, sensor: String, rows: [(time: Int64, counter: UInt64, hlc: HLC, values: [(quantity: String, value: Double)])])? {
        guard e.type == "reading.compact", knownTypes[e.type] == e.schemaVersion else { return nil }
        return ReadingCompaction.rowValues(e.payloadReader)
    }

    /// `readingValues(type:version:payload:)` of an event, reading the payload where it lies in the event's
    /// encoding (no copy).
    public static func readingValues(of e: Event)
        -> (source: String, sensor: String, time: Int64, values: [(quantity: String, value: Double)])? {
        readingValues(type: e.type, version: e.schemaVersion, reader: e.payloadReader)
    }

    /// `knownTypes["reading"]`, without the look-up on the projection's path.
    private static let readingVersion = knownTypes["reading"]!

    /// `readingValues(of:)` with the values put in `values` (emptied first, its storage kept): a caller that
    /// reads many events reuses one buffer instead of allocating an array per event.
    public static func readingValues(of e: Event, into values: inout [(quantity: String, value: Double)])
        -> (source: String, sensor: String, time: Int64)? {
        readingValues(type: e.type, version: e.schemaVersion, reader: e.payloadReader, into: &values)
    }

    private static func readingValues(type: String, version: UInt16, reader: ByteReader)
        -> (source: String, sensor: String, time: Int64, values: [(quantity: String, value: Double)])? {
        var values: [(quantity: String, value: Double)] = []
        guard let h = readingValues(type: type, version: version, reader: reader, into: &values) else { return nil }
        return (h.source, h.sensor, h.time, values)
    }

    private static func readingValues(type: String, version: UInt16, reader: ByteReader,
                                      into values: inout [(quantity: String, value: Double)]) -> (source: String, sensor: String, time: Int64)? {
        values.removeAll(keepingCapacity: true)
        guard type == "reading", version == readingVersion else { return nil }
        var r = reader
        do throws(DecodingError) {
            let source = try r.string(), sensor = try r.string(), time = try r.zigzag()
            let n = try r.count(limit: r.remaining)
            values.reserveCapacity(n)
            for _ in 0..<n {
                let quantity = try r.string(), value = try r.f64()
                if value.isFinite { values.append((quantity, value)) }
            }
            try r.expectEnd(type)
            return (source, sensor, time)
        } catch {
            values.removeAll(keepingCapacity: true)
            return nil
        }
    }

    /// Decodes a payload. Unknown types and versions give `.unknown`; a known type whose payload does not
    /// parse throws.
    public static func decode(type: String, version: UInt16, payload: [UInt8]) throws(DecodingError) -> EventBody {
        guard knownTypes[type] == version else { return .unknown(type: type, version: version, payload: payload) }
        var r = ByteReader(payload)
        let body: EventBody
        switch type {
        case "favourite.add": body = .favouriteAdd(sensor: try r.string())
        case "watch.add": body = .watchAdd(sensor: try r.string())
        case "source.enable": body = .sourceEnable(source: try r.string())
        case "source.disable": body = .sourceDisable(source: try r.string())
        case "favourite.remove", "watch.remove":
            let s = try r.string()
            let observed = try r.array { (r: inout ByteReader) throws(DecodingError) in try EventID.decode(from: &r) }
            body = type == "favourite.remove" ? .favouriteRemove(sensor: s, observed: observed)
                                              : .watchRemove(sensor: s, observed: observed)
        case "alert.set":
            let c = try r.u8(), o = try r.u8(), e = try r.u8()
            guard c == 0 || AQICategory(rawValue: c) != nil, o == 0 || OnClear(rawValue: o) != nil, e <= 2 else {
                throw DecodingError.malformed("alert.set field out of range")
            }
            body = .alertSet(AlertChange(category: AQICategory(rawValue: c), onClear: OnClear(rawValue: o),
                                         enabled: e == 0 ? nil : e == 2))
        case "unit.set":
            let u = try r.u8()
            guard let unit = TemperatureUnit(rawValue: u) else { throw DecodingError.malformed("unit \(u)") }
            body = .unitSet(unit)
        case "source.correct": body = .sourceCorrect(source: try r.string(), correction: try r.string())
        case "biomarker.target":
            let t = BiomarkerTarget(readingType: try r.string(), minReading: try r.f64(), maxReading: try r.f64(),
                                    icon: try r.string())
            // Counts of readings per day: finite, not negative, min <= max, below a billion.
            guard t.minReading.isFinite, t.maxReading.isFinite, t.minReading >= 0, t.minReading <= t.maxReading,
                  t.maxReading < 1e9 else { throw DecodingError.malformed("biomarker.target range \(t.minReading)...\(t.maxReading)") }
            body = .biomarkerTarget(t)
        case "alert.test": body = .testAlert(sensor: try r.optionalString())
        case "alert.delivered": body = .alertDelivered(key: try r.string())
        case "device.renew": body = .renewalRequest(try RenewalRequest.decode(&r))
        case "device.certificate":
            let chain = try r.array { (r: inout ByteReader) throws(DecodingError) in try r.blob() }
            guard (1...4).contains(chain.count), chain.allSatisfy({ $0.count <= 4096 }) else {
                throw DecodingError.malformed("device.certificate: a chain of \(chain.count) certificates")
            }
            body = .certificateIssued(chain: chain)
        case "sensor.register":
            body = .sensorRegistered(SensorRegistration(
                sensor: try r.string(), name: try r.string(), source: try r.string(), kind: try r.string(),
                latitude: try r.optionalF64(), longitude: try r.optionalF64(), timeZone: try r.optionalString()))
        case "reading":
            let source = try r.string(), sensor = try r.string(), time = try r.zigzag()
            let values = try r.array { (r: inout ByteReader) throws(DecodingError) in
                Measurement(try r.string(), try r.f64())
            }
            body = .reading(Reading(source: source, sensor: sensor, time: time, values: values))
        case "reading.block": body = .readingBlock(try ReadingBlock.decode(&r))
        case "reading.compact": body = .readingCompaction(try ReadingCompaction.decode(&r))
        case "reading.rollup": body = .readingRollup(try ReadingRollup.decode(&r))
        case "retention.policy": body = .retentionPolicy(try RetentionPolicy.decode(&r))
        case "pollen.forecast":
            let lat = try r.f64(), lon = try r.f64(), region = try r.optionalString(), date = try r.string()
            let entries = try r.array { (r: inout ByteReader) throws(DecodingError) -> PollenEntry in
                let code = try r.string(), name = try r.string(), isPlant = try r.bool()
                let plantType = try r.optionalString()
                let season = try r.u8(), index = try r.u8()
                guard season <= 2, index <= 6 else { throw DecodingError.malformed("pollen entry field out of range") }
                var e = PollenEntry(code: code, displayName: name, isPlant: isPlant, plantType: plantType,
                                    inSeason: season == 0 ? nil : season == 2,
                                    indexValue: index == 0 ? nil : index - 1)
                e.category = try r.optionalString()
                e.indexDescription = try r.optionalString()
                e.colour = try r.optionalString()
                e.healthRecommendations = try r.array { (r: inout ByteReader) throws(DecodingError) in try r.string() }
                e.family = try r.optionalString(); e.season = try r.optionalString()
                e.specialColors = try r.optionalString(); e.specialShapes = try r.optionalString()
                e.crossReaction = try r.optionalString(); e.picture = try r.optionalString()
                e.pictureCloseup = try r.optionalString()
                return e
            }
            body = .pollenForecast(PollenForecast(latitude: lat, longitude: lon, regionCode: region, date: date,
                                                  entries: entries))
        case "temperature.daily":
            body = .dailyTemperature(DailyTemperature(
                station: try r.string(), date: try r.string(), maxC: try r.optionalF64(), minC: try r.optionalF64(),
                latitude: try r.optionalF64(), longitude: try r.optionalF64()))
        case "biomarker.reading":
            let b = BiomarkerReading(readingType: try r.string(), time: try r.zigzag(), value: try r.f64(), unit: try r.string())
            guard b.value.isFinite else { throw DecodingError.malformed("biomarker.reading value \(b.value)") }
            body = .biomarkerReading(b)
        case "device.revoke": body = .revocation(try Revocation.decode(&r))
        default:
            return .unknown(type: type, version: version, payload: payload)
        }
        try r.expectEnd(type)
        return body
    }

    /// The payload as JSON, for display and export.
    public var json: JSONValue {
        switch self {
        case .favouriteAdd(let s), .watchAdd(let s): return .object([("sensor", .string(s))])
        case .favouriteRemove(let s, let o), .watchRemove(let s, let o):
            return .object([("sensor", .string(s)), ("observed", .array(o.map { .string($0.description) }))])
        case .alertSet(let c):
            var pairs: [(String, JSONValue)] = []
            if let v = c.category { pairs.append(("category", .string(v.name))) }
            if let v = c.onClear { pairs.append(("onClear", .string(v.name))) }
            if let v = c.enabled { pairs.append(("enabled", .bool(v))) }
            return .object(pairs)
        case .unitSet(let u): return .object([("unit", .string(u.name))])
        case .sourceEnable(let s), .sourceDisable(let s): return .object([("source", .string(s))])
        case .sourceCorrect(let s, let c): return .object([("source", .string(s)), ("correction", .string(c))])
        case .biomarkerTarget(let t):
            return .object([("readingType", .string(t.readingType)), ("minReading", .double(t.minReading)),
                            ("maxReading", .double(t.maxReading)), ("icon", .string(t.icon))])
        case .testAlert(let s): return .object([("sensor", .string(s))])
        case .alertDelivered(let k): return .object([("key", .string(k))])
        case .renewalRequest(let r):
            return .object([("key", .string(Digest.hex(r.key))), ("replica", .string(r.replica.description)),
                            ("notAfter", .string(ISOTime.format(millis: Int64(clamping: r.notAfterMillis))))])
        case .certificateIssued(let chain):
            return .object([("chain", .array(chain.map { .string(Digest.hex($0)) }))])
        case .revocation(let r):
            return .object([("key", .string(Digest.hex(r.key))), ("replica", .string(r.replica.description)),
                            ("revokedAt", .string(ISOTime.format(millis: Int64(clamping: r.revokedAtMillis)))),
                            ("reason", .string(r.reason)), ("signer", .string(Digest.hex(r.signer))),
                            ("signerChain", .array(r.signerChain.map { .string(Digest.hex($0)) })),
                            ("signature", .string(Digest.hex(r.signature)))])
        case .sensorRegistered(let r):
            return .object([("sensor", .string(r.sensor)), ("name", .string(r.name)), ("source", .string(r.source)),
                            ("kind", .string(r.kind)), ("latitude", .double(r.latitude)),
                            ("longitude", .double(r.longitude)), ("timeZone", .string(r.timeZone))])
        case .reading(let r):
            return .object([("source", .string(r.source)), ("sensor", .string(r.sensor)), ("time", .int(r.time)),
                            ("values", .object(r.values.map { ($0.quantity, .double($0.value)) }))])
        case .readingBlock(let b):
            return .object([("source", .string(b.source)), ("sensor", .string(b.sensor)),
                            ("rows", .array(b.rows.map { r in .object([("time", .int(r.time)),
                                                                       ("values", .object(r.values.map { ($0.quantity, .double($0.value)) }))]) }))])
        case .readingCompaction(let c):
            return .object([("source", .string(c.source)), ("sensor", .string(c.sensor)),
                            ("retires", .array(c.retires.map { .string($0.lowerBound == $0.upperBound ? "\($0.lowerBound)" : "\($0.lowerBound)-\($0.upperBound)") })),
                            ("rows", .array(c.rows.map { r in .object([("time", .int(r.time)), ("counter", .int(Int64(clamping: r.counter))),
                                                                       ("hlc", .string(r.hlc.description)),
                                                                       ("values", .object(r.values.map { ($0.quantity, .double($0.value)) }))]) }))])
        case .readingRollup(let r):
            return .object([("source", .string(r.source)), ("sensor", .string(r.sensor)),
                            ("retires", .array(r.retires.map { .string($0.lowerBound == $0.upperBound ? "\($0.lowerBound)" : "\($0.lowerBound)-\($0.upperBound)") })),
                            ("hours", .array(r.hours.map { h in .object([("hour", .string(ISOTime.format(millis: h.hour * 3_600_000))),
                                                                         ("aggregateHex", .string(Digest.hex(h.aggregate)))]) }))])
        case .retentionPolicy(let p):
            return .object([("rawDays", .int(Int64(p.rawDays))), ("issuedAt", .string(ISOTime.format(millis: Int64(clamping: p.issuedAtMillis)))),
                            ("signer", .string(Digest.hex(p.signer))), ("signature", .string(Digest.hex(p.signature)))])
        case .pollenForecast(let p):
            return .object([
                ("latitude", .double(p.latitude)), ("longitude", .double(p.longitude)),
                ("regionCode", .string(p.regionCode)), ("date", .string(p.date)),
                ("entries", .array(p.entries.map { e in
                    .object([("code", .string(e.code)), ("displayName", .string(e.displayName)),
                             ("isPlant", .bool(e.isPlant)), ("plantType", .string(e.plantType)),
                             ("inSeason", e.inSeason.map(JSONValue.bool) ?? .null),
                             ("value", e.indexValue.map { .int(Int64($0)) } ?? .null),
                             ("category", .string(e.category)), ("indexDescription", .string(e.indexDescription)),
                             ("colour", .string(e.colour)),
                             ("healthRecommendations", .array(e.healthRecommendations.map(JSONValue.string))),
                             ("family", .string(e.family)), ("season", .string(e.season)),
                             ("specialColors", .string(e.specialColors)), ("specialShapes", .string(e.specialShapes)),
                             ("crossReaction", .string(e.crossReaction)), ("picture", .string(e.picture)),
                             ("pictureCloseup", .string(e.pictureCloseup))])
                })),
            ])
        case .dailyTemperature(let t):
            return .object([("station", .string(t.station)), ("date", .string(t.date)), ("maxC", .double(t.maxC)),
                            ("minC", .double(t.minC)), ("latitude", .double(t.latitude)),
                            ("longitude", .double(t.longitude))])
        case .biomarkerReading(let b):
            return .object([("readingType", .string(b.readingType)), ("time", .int(b.time)),
                            ("value", .double(b.value)), ("unit", .string(b.unit))])
        case .unknown(_, _, let p):
            return .object([("unknownPayloadHex", .string(Digest.hex(p)))])
        }
    }
}
