import Testing
import BreezeCrypto
@testable import BreezeCore

struct CodecTests {
    static let origin = Origin(replica: ReplicaID(rawValue: 0x0123_4567_89ab_cdef), epoch: 3)

    static let bodies: [(StreamID, EventBody)] = [
        (.user("ana"), .favouriteAdd(sensor: "131075")),
        (.user("ana"), .favouriteRemove(sensor: "131075", observed: [EventID(origin: origin, counter: 1),
                                                                     EventID(origin: origin, counter: 9)])),
        (.user("ana"), .watchAdd(sensor: "AQS-370630099")),
        (.user("ana"), .watchRemove(sensor: "AQS-370630099", observed: [])),
        (.user("ana"), .alertSet(AlertChange(category: .unhealthy, onClear: .silent, enabled: false))),
        (.user("ana"), .alertSet(AlertChange(category: nil, onClear: nil, enabled: true))),
        (.user("ana"), .unitSet(.fahrenheit)),
        (.user("ana"), .sourceEnable(source: "purpleair")),
        (.user("ana"), .sourceDisable(source: "airnow")),
        (.user("ana"), .sourceCorrect(source: "purpleair", correction: "epa-2021-smoke")),
        (.user("ana"), .biomarkerTarget(BiomarkerTarget(readingType: "Blood Glucose", minReading: 0, maxReading: 3, icon: "drop"))),
        (.user("ana"), .testAlert(sensor: nil)),
        (.user("ana"), .testAlert(sensor: "131075")),
        (.user("ana"), .alertDelivered(key: "purpleair:87173|2023-10-27T21:00:00Z|fired")),
        (.public, .revocation(Revocation.sign(key: Ed25519.KeyPair(seed: (0..<32).map { UInt8($0) }).publicKey,
                                              replica: ReplicaID(rawValue: 0x1111), revokedAtMillis: 1_750_000_000_000,
                                              reason: "lost", signer: Ed25519.KeyPair(seed: (0..<32).map { UInt8(255 - $0) }),
                                              signerChain: [[1, 2, 3]]))),
        (.public, .sensorRegistered(SensorRegistration(sensor: "131075", name: "Ümlaut 空气", source: "purpleair",
                                                      kind: "purpleair", latitude: 42.73, longitude: -73.69,
                                                      timeZone: "America/New_York"))),
        (.public, .sensorRegistered(SensorRegistration(sensor: "x", name: "no location", source: "purpleair",
                                                      kind: "purpleair", latitude: nil, longitude: nil, timeZone: nil))),
        (.public, .reading(Reading(source: "purpleair", sensor: "131075", time: 1_698_000_000,
                                   values: [Measurement("pm25_cf1_a", 12.5), Measurement("pm25_cf1_b", 13.25),
                                            Measurement("temperature", -3.5), Measurement("humidity", 41)]))),
        (.public, .reading(Reading(source: "aqs", sensor: "370630099", time: -86400, values: []))),
        (.public, .readingBlock(ReadingBlock(source: "purpleair", sensor: "131075", rows: [
            .init(time: 1_698_000_000, values: [Measurement("pm25_cf1_a", 12.5), Measurement("a custom quantity", .pi)]),
            .init(time: 1_698_000_120, values: [Measurement("humidity_housing", 41), Measurement("pm25_cf1_a", -0.0)]),
        ]))),
        (.public, .pollenForecast(PollenForecast(latitude: 51.1657, longitude: 10.4515, regionCode: "DE", date: "2025-08-03",
            entries: [PollenEntry(code: "GRASS", displayName: "Grass", isPlant: false, inSeason: true, indexValue: 1,
                                  category: "Very Low", indexDescription: "People with very high allergy...",
                                  colour: "#009E3A", healthRecommendations: ["a", "b"]),
                      PollenEntry(code: "OLIVE", displayName: "Olive", isPlant: true, plantType: "TREE"),
                      PollenEntry(code: "GRAMINALES", displayName: "Grasses", isPlant: true, plantType: "GRASS",
                                  inSeason: false, indexValue: 0, family: "Poaceae", season: "Late spring, summer",
                                  picture: "https://storage.googleapis.com/pollen-pictures/graminales_full.jpg")]))),
        (.public, .dailyTemperature(DailyTemperature(station: "GHCND:USC00381770", date: "1930-01-01", maxC: 12.2,
                                                     minC: nil, latitude: 34.68, longitude: -82.82))),
        (.health("ana"), .biomarkerReading(BiomarkerReading(readingType: "Blood Glucose", time: 1_269_388_800,
                                                            value: 148, unit: "mg/dL"))),
    ]

    @Test func stringsDecodeASCIIAndOtherUTF8AndRefuseInvalidBytes() throws {
        var w = ByteWriter()
        w.string("pm25_cf1_a")
        w.string("Zürich ☁️ 北京")
        var r = ByteReader(w.bytes)
        #expect(try r.string() == "pm25_cf1_a")
        #expect(try r.string() == "Zürich ☁️ 北京")
        #expect(r.isAtEnd)
        for bad: [UInt8] in [[3, 0x61, 0xC3, 0x28], [2, 0xFF, 0x61], [3, 0xED, 0xA0, 0x80]] {   // bad continuation, 0xFF, surrogate
            var b = ByteReader(bad)
            #expect(throws: DecodingError.self) { try b.string() }
        }
    }

    @Test func theReadingFastPathAgreesWithDecode() throws {
        var rng = SeededRandom(seed: 11)
        let names = ["pm25_cf1_a", "pm25_cf1_b", "humidity", "temperature", "pm25", "Zürich ☁️"]
        for _ in 0..<300 {
            let values = (0..<Int.random(in: 0...8, using: &rng)).map { _ in
                Measurement(names.randomElement(using: &rng)!,
                            [Double.nan, .infinity, -1.5, 0, 12.25].randomElement(using: &rng)! * Double(Int.random(in: 1...3, using: &rng)))
            }
            let body = EventBody.reading(Reading(source: "purpleair", sensor: String(Int.random(in: 1...999, using: &rng)),
                                                 time: Int64.random(in: -100_000...2_000_000_000, using: &rng), values: values))
            let (type, version, payload) = body.encode()
            guard case .reading(let r) = try EventBody.decode(type: type, version: version, payload: payload),
                  let fast = EventBody.readingValues(type: type, version: version, payload: payload) else {
                Issue.record("\(body) did not decode"); continue
            }
            #expect(fast.source == r.source && fast.sensor == r.sensor && fast.time == r.time)
            #expect(fast.values.map(\.quantity) == r.values.filter { $0.value.isFinite }.map(\.quantity))
            #expect(fast.values.map(\.value) == r.values.filter { $0.value.isFinite }.map(\.value))
            // Read in place from an event's encoding (as the projection does), the same values.
            let event = Event(stream: .public, id: EventID(origin: Origin(replica: ReplicaID(rawValue: 1), epoch: 1), counter: 1),
                              hlc: HLC(rawValue: 1 << 16), body: body)
            let inPlace = try #require(EventBody.readingValues(of: event))
            #expect(inPlace.source == fast.source && inPlace.sensor == fast.sensor && inPlace.time == fast.time)
            #expect(inPlace.values.map(\.quantity) == fast.values.map(\.quantity) && inPlace.values.map(\.value) == fast.values.map(\.value))
            // Whatever `decode` refuses, the fast path refuses too: truncated, padded, another version or type.
            for bad in [Array(payload.dropLast()), payload + [0]] where !payload.isEmpty {
                let general = try? EventBody.decode(type: type, version: version, payload: bad)
                let isReading: Bool = { if case .reading = general { return true } else { return false } }()
                #expect((EventBody.readingValues(type: type, version: version, payload: bad) != nil) == isReading)
            }
            #expect(EventBody.readingValues(type: type, version: version + 1, payload: payload) == nil)
            #expect(EventBody.readingValues(type: "favourite.add", version: version, payload: payload) == nil)
        }
    }

    @Test func everyBodyRoundTripsThroughTheEventEncoding() throws {
        for (i, (stream, body)) in Self.bodies.enumerated() {
            let e = Event(stream: stream, id: EventID(origin: Self.origin, counter: UInt64(i + 1)),
                          hlc: HLC(physicalMillis: 1_700_000_000_000, logical: UInt16(i)), body: body)
            let d = try Event(decoding: e.encoded)
            #expect(d == e)
            #expect(d.stream == stream && d.id == e.id && d.hlc == e.hlc)
            #expect(try d.body() == body, "body \(body.type)")
            #expect(EventBody.knownTypes[body.type] == d.schemaVersion)
            #expect(body.belongs(in: stream))
        }
    }

    /// The event encoding written in one pass into a buffer of its exact size (`ByteCursor`) is the layout of
    /// `Protocol/encoding.md` as `ByteWriter` writes it, for every width of every varint: epochs, counters,
    /// schema versions and lengths at the boundaries of 1 to 10 bytes, empty and long payloads, each kind
    /// of stream, non-ASCII type names.
    @Test func theOnePassEncodingIsTheDocumentedLayout() throws {
        var rng = SeededRandom(seed: 0xB7EE2E)
        let boundaries: [UInt64] = [0, 1, 127, 128, 16_383, 16_384, (1 << 21) - 1, 1 << 21, 1 << 35, 1 << 56, 1 << 63, .max]
        for v in boundaries {
            var w = ByteWriter()
            w.varint(v)
            #expect(ByteWriter.varintSize(v) == w.bytes.count, "varint size of \(v)")
        }
        let streams: [StreamID] = [.public, .user("ana"), .user("a.b_c-D9"), .health(String(repeating: "x", count: 64))]
        for i in 0..<400 {
            let epoch = UInt32(truncatingIfNeeded: boundaries[i % boundaries.count] | 1)
            let counter = boundaries[(i / 3) % boundaries.count] | 1
            let version = UInt16(truncatingIfNeeded: boundaries[(i / 5) % boundaries.count])
            let length = [0, 1, 127, 128, 300, 16_384][i % 6]
            let payload = (0..<length).map { _ in UInt8.random(in: 0...255, using: &rng) }
            let type = ["reading", "t", "type.é", String(repeating: "long.", count: 30)][(i / 7) % 4]
            let stream = streams[(i / 2) % streams.count]
            let id = EventID(origin: Origin(replica: ReplicaID(rawValue: rng.next()), epoch: epoch), counter: counter)
            let hlc = HLC(rawValue: rng.next())
            let e = Event(stream: stream, id: id, hlc: hlc, type: type, schemaVersion: version, payload: payload)
            var w = ByteWriter()
            w.u8(Event.format); w.u64(id.origin.replica.rawValue); w.varint(UInt64(epoch)); w.varint(counter)
            w.u64(hlc.rawValue); w.string(stream.description); w.string(type); w.varint(UInt64(version)); w.blob(payload)
            let expected = w.bytes + w.bytes.withUnsafeBytes { Digest.blake2b($0, length: Event.hashLength) }
            #expect(e.encoded == expected, "event \(i)")
            #expect(e.payload == payload && e.hasShortestEncoding)
            let d = try Event(decoding: e.encoded)
            #expect(d.stream == stream && d.id == id && d.type == type && d.schemaVersion == version)
            #expect(d.hasShortestEncoding, "event \(i) decoded")
        }
        // A body's payload appended to a reused buffer (holding the previous body's) decodes to that body.
        var reused = ByteWriter()
        for (_, body) in Self.bodies + [(.public, .unknown(type: "radon.reading", version: 3, payload: [1, 2, 3]))] {
            reused.removeAll()
            let (type, version) = body.encodePayload(into: &reused)
            #expect(try EventBody.decode(type: type, version: version, payload: reused.bytes) == body, "\(body.type)")
        }
    }

    /// A longer varint in any of an event's six varint fields (its hash computed over those bytes, so it is
    /// otherwise valid) is refused at decode (`Protocol/encoding.md` 1): a replica never accepts and relays an
    /// event its own export could not write byte for byte.
    @Test func aLongerVarintInAnyFieldIsRefusedAtDecode() throws {
        let id = EventID(origin: Self.origin, counter: 300)
        let built = Event(stream: .user("ana"), id: id, hlc: HLC(rawValue: 99), type: "unit.set", schemaVersion: 1, payload: [2])
        #expect(built.hasShortestEncoding)
        #expect(try Event(decoding: built.encoded).hasShortestEncoding)
        for padded in -1..<6 {
            var w = ByteWriter()
            func varint(_ v: UInt64, _ field: Int) {
                w.varint(v)
                if field == padded {   // the same value one byte longer: continuation bit on the last byte, then 0
                    var b = w.bytes
                    b[b.count - 1] |= 0x80
                    w = ByteWriter(); w.raw(b); w.u8(0)
                }
            }
            w.u8(Event.format); w.u64(Self.origin.replica.rawValue); varint(UInt64(Self.origin.epoch), 0); varint(300, 1)
            w.u64(99); varint(8, 2); w.utf8("user:ana"); varint(8, 3); w.utf8("unit.set"); varint(1, 4); varint(1, 5); w.u8(2)
            let bytes = w.bytes + w.bytes.withUnsafeBytes { Digest.blake2b($0, length: Event.hashLength) }
            if padded < 0 {
                #expect(bytes == built.encoded, "the unpadded form is the built event")
            } else {
                #expect(throws: DecodingError.self, "field \(padded)") { try Event(decoding: bytes) }
            }
        }
    }

    @Test func nonMinimalVarintsAreRefusedAndMinimalOnesAccepted() throws {
        for bytes: [UInt8] in [[0x80, 0x00], [0x81, 0x00], [0x81, 0x80, 0x00], [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x80, 0x00]] {
            var r = ByteReader(bytes)
            #expect(throws: DecodingError.self, "\(bytes)") { try r.varint() }
        }
        for (bytes, v): ([UInt8], UInt64) in [([0x00], 0), ([0x80, 0x01], 128), ([0xff, 0x7f], 16383), ([0x80, 0x80, 0x01], 16384)] {
            var r = ByteReader(bytes)
            #expect(try r.varint() == v)
        }
    }

    @Test func eachTypeBelongsOnlyInItsKindOfStream() {
        #expect(!EventBody.favouriteAdd(sensor: "x").belongs(in: .public))
        #expect(!EventBody.reading(Reading(source: "a", sensor: "b", time: 0, values: [])).belongs(in: .user("u")))
        #expect(!EventBody.biomarkerReading(BiomarkerReading(readingType: "g", time: 0, value: 1, unit: "x")).belongs(in: .public))
        #expect(EventBody.unknown(type: "future.thing", version: 1, payload: []).belongs(in: .public))
    }

    @Test func unknownTypesAndVersionsArePreservedByteForByte() throws {
        let future = Event(stream: .user("ana"), id: EventID(origin: Self.origin, counter: 1), hlc: HLC(rawValue: 42),
                           type: "favourite.add", schemaVersion: 2, payload: [9, 8, 7])
        let other = Event(stream: .public, id: EventID(origin: Self.origin, counter: 2), hlc: HLC(rawValue: 43),
                          type: "radon.reading", schemaVersion: 1, payload: [1, 2, 3, 4])
        for e in [future, other] {
            let d = try Event(decoding: e.encoded)
            #expect(d.encoded == e.encoded)
            guard case .unknown(let t, let v, let p) = try d.body() else {
                Issue.record("expected unknown body for \(e.type) v\(e.schemaVersion)")
                continue
            }
            #expect(t == e.type && v == e.schemaVersion && p == e.payload)
            // Re-encoding the unknown body gives the same event bytes.
            #expect(Event(stream: d.stream, id: d.id, hlc: d.hlc, body: try d.body()).encoded == e.encoded)
        }
    }

    @Test func tamperedTruncatedOrPaddedEventsAreRejected() throws {
        let e = Event(stream: .user("ana"), id: EventID(origin: Self.origin, counter: 1), hlc: HLC(rawValue: 1),
                      body: .favouriteAdd(sensor: "s"))
        for i in 0..<e.encoded.count {
            var bad = e.encoded
            bad[i] ^= 0x40
            #expect(throws: DecodingError.self, "flip at byte \(i)") { try Event(decoding: bad) }
        }
        for n in 0..<e.encoded.count {
            #expect(throws: DecodingError.self) { try Event(decoding: Array(e.encoded.prefix(n))) }
        }
        #expect(throws: DecodingError.self) { try Event(decoding: e.encoded + [0]) }
    }

    /// An encoded event with `name` as its stream, hashed correctly, so only the name can be wrong.
    static func encoded(streamName name: [UInt8]) -> [UInt8] {
        var w = ByteWriter()
        w.u8(Event.format)
        EventID(origin: origin, counter: 1).encode(into: &w)
        w.u64(7)
        w.varint(UInt64(name.count))
        w.raw(name)
        w.string("favourite.add")
        w.varint(1)
        w.blob(EventBody.favouriteAdd(sensor: "s").encode().payload)
        return w.bytes + w.bytes.withUnsafeBytes { Digest.blake2b($0, length: Event.hashLength) }
    }

    @Test func streamNamesDecodeInPlaceWithTheSameRulesAndErrorsAsParsing() throws {
        let names = ["public", "user:ana", "health:ana", "user:A.b_c-9", "user:" + String(repeating: "x", count: 64),
                     "user:" + String(repeating: "x", count: 65), "publicx", "Public", "user:", "user", "health:",
                     "user:a b", "user:a:b", "users:ana", "car:ana", "", ":", "user:an\u{e9}", "health:\u{1F600}"]
        for name in names {
            let bytes = Self.encoded(streamName: Array(name.utf8))
            let expected: Result<StreamID, DecodingError>
            do { expected = .success(try StreamID(parsing: name)) } catch { expected = .failure(.malformed(error.description)) }
            let got: Result<StreamID, DecodingError>
            do { got = .success(try Event(decoding: bytes).stream) } catch { got = .failure(error) }
            #expect(got == expected, "stream name \(name.debugDescription)")
        }
        // Not UTF-8 at all: refused as such, before any parsing.
        #expect(throws: DecodingError.malformed("string is not valid UTF-8")) {
            try Event(decoding: Self.encoded(streamName: [0x75, 0x73, 0x65, 0x72, 0x3a, 0xff]))
        }
    }

    @Test func payloadAndHashAreTheSlicesOfTheEncodingTheyDescribe() throws {
        for (i, (stream, body)) in Self.bodies.enumerated() {
            let (type, version, payload) = body.encode()
            let e = Event(stream: stream, id: EventID(origin: Self.origin, counter: UInt64(i + 1)),
                          hlc: HLC(rawValue: UInt64(i)), type: type, schemaVersion: version, payload: payload)
            #expect(e.payload == payload && Array(e.payloadBytes) == payload && Array(e.hashBytes) == e.hash)
            #expect(e.hash == Digest.blake2b(Array(e.encoded.dropLast(Event.hashLength)), length: Event.hashLength))
            #expect(e.encoded.suffix(Event.hashLength + payload.count).prefix(payload.count).elementsEqual(payload))
            let d = try Event(decoding: e.encoded)
            #expect(d.payload == payload && d.hash == e.hash && d.type == type && d.schemaVersion == version)
        }
    }

    @Test func malformedKnownPayloadThrowsInsteadOfGuessing() {
        #expect(throws: DecodingError.self) { try EventBody.decode(type: "unit.set", version: 1, payload: [9]) }
        #expect(throws: DecodingError.self) { try EventBody.decode(type: "favourite.add", version: 1, payload: [5, 65]) }
        #expect(throws: DecodingError.self) { try EventBody.decode(type: "alert.set", version: 1, payload: [0, 0, 0, 0]) }
    }

    @Test func randomBytesNeverCrashTheDecoder() {
        var rng = SeededRandom(seed: 7)
        for _ in 0..<20_000 {
            let n = Int.random(in: 0..<80, using: &rng)
            let bytes = (0..<n).map { _ in UInt8.random(in: 0...255, using: &rng) }
            _ = try? Event(decoding: bytes)
            for t in EventBody.knownTypes.keys { _ = try? EventBody.decode(type: t, version: 1, payload: bytes) }
        }
    }

    @Test func varintsRoundTripAtTheEdgesAndRejectOverflow() throws {
        for v: UInt64 in [0, 1, 127, 128, 300, 16383, 16384, UInt64(UInt32.max), UInt64.max - 1, UInt64.max] {
            var w = ByteWriter()
            w.varint(v)
            var r = ByteReader(w.bytes)
            #expect(try r.varint() == v)
            #expect(r.isAtEnd)
        }
        for v: Int64 in [0, -1, 1, Int64.min, Int64.max, -86400] {
            var w = ByteWriter()
            w.zigzag(v)
            var r = ByteReader(w.bytes)
            #expect(try r.zigzag() == v)
        }
        var r = ByteReader([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02])
        #expect(throws: DecodingError.self) { try r.varint() }
        var huge = ByteReader([0xff, 0xff, 0xff, 0x7f])
        #expect(throws: DecodingError.self) { try huge.blob() }
    }

    @Test func theSpecExampleEncodesToTheDocumentedBytes() throws {
        // Protocol/encoding.md, "Worked example": favourite.add of sensor "131075" by replica
        // 0123456789abcdef, epoch 3, counter 1, HLC 1700000000000.5, in stream user:ana.
        let e = Event(stream: .user("ana"), id: EventID(origin: Self.origin, counter: 1),
                      hlc: HLC(physicalMillis: 1_700_000_000_000, logical: 5), body: .favouriteAdd(sensor: "131075"))
        let hex = e.encoded.map { String($0, radix: 16) }.map { $0.count == 1 ? "0" + $0 : $0 }.joined()
        // Expected bytes and BLAKE2b-128 computed independently with Python's hashlib.
        #expect(hex == "01efcdab8967452301030105000068e5cf8b0108757365723a616e610d6661766f75726974652e616464"
                     + "010706313331303735" + "1bc43f37cb606e5e39ee81f5a2ea7055")
        #expect(e.encoded.count == 67)
    }
}

/// `Decimal64`: every double round-trips bit for bit, short decimals take a few bytes, and only the canonical
/// form decodes.
struct Decimal64Tests {
    static func roundTrip(_ v: Double) throws -> (Double, Int) {
        var w = ByteWriter(capacity: 16)
        w.decimal(v)
        var r = ByteReader(w.bytes)
        let back = try r.decimal()
        #expect(r.isAtEnd)
        return (back, w.bytes.count)
    }

    @Test func everyDoubleRoundTripsExactly() throws {
        var rng = SeededRandom(seed: 20261202)
        var values: [Double] = [0, -0.0, 1, -1, 12.34, 45, 1013.25, 0.1, 1e300, -1e-300, .infinity, -.infinity,
                                .greatestFiniteMagnitude, .leastNonzeroMagnitude, 9_007_199_254_740_993, 123456.789012]
        for _ in 0..<20_000 {
            values.append(Double(bitPattern: rng.next()))                          // any bits, NaNs included
            values.append((Double(Int64.random(in: -100_000...100_000, using: &rng)) / [1, 10, 100, 1000][Int.random(in: 0...3, using: &rng)]))
        }
        for v in values {
            let (back, _) = try Self.roundTrip(v)
            #expect(back.bitPattern == v.bitPattern, "\(v) came back as \(back)")
        }
    }

    @Test func theEarlyRejectAgreesWithTheFullSearch() {
        var rng = SeededRandom(seed: 5050)
        var values: [Double] = [0.1, 0.3, 1e-6, 1.5e-6, 1e-7, 123456.789012, 1_125_899_906.842624, 1_125_899_906.8426241,
                                9_007_199_254.740991, 4503599627.370496]
        for _ in 0..<200_000 {
            values.append(Double(bitPattern: rng.next()))
            let k = Int.random(in: 0...7, using: &rng)
            let m = Double(Int64.random(in: -(1 << 52)...(1 << 52), using: &rng) >> Int64.random(in: 0...52, using: &rng))
            values.append(m / [1, 10, 100, 1000, 10_000, 100_000, 1_000_000, 10_000_000][k])
            values.append(Double(Int.random(in: -1_000_000...1_000_000, using: &rng)) / 1000 * 3)
        }
        for v in values {
            let fast = Decimal64.decimal(v), full = Decimal64.fullSearch(v)
            #expect(fast?.mantissa == full?.mantissa && fast?.exponent == full?.exponent, "\(v): \(String(describing: fast)) vs \(String(describing: full))")
        }
    }

    @Test func typicalReadingsTakeAFewBytes() throws {
        #expect(try Self.roundTrip(4.53).1 == 2 && Self.roundTrip(12.34).1 == 3 && Self.roundTrip(45).1 == 2 && Self.roundTrip(1013.25).1 == 3)
        #expect(try Self.roundTrip(0).1 == 1 && Self.roundTrip(.pi).1 == 9 && Self.roundTrip(-0.0).1 == 9)
    }

    @Test func aNonCanonicalFormIsRefused() {
        // 12.3 as 1230e-2 (k 2 where 1 suffices), and 12.0 written in full.
        var w = ByteWriter(capacity: 16)
        w.varint((1230 << 1) << 3 | 2)
        var r = ByteReader(w.bytes)
        #expect(throws: DecodingError.self) { try r.decimal() }
        var full = ByteWriter(capacity: 16)
        full.varint(7)
        full.f64(12)
        var r2 = ByteReader(full.bytes)
        #expect(throws: DecodingError.self) { try r2.decimal() }
    }
}
