import Foundation
import Testing
import BreezeCore
@testable import BreezeImport

struct SensorsCSVTests {
    typealias F = PurpleAirFixtures

    static func options(at: (Double, Double)? = nil) -> ImportOptions {
        var o = ImportOptions()
        o.at = at.map { (latitude: $0.0, longitude: $0.1) }
        return o
    }

    @Test func theAirJusticeLabRegistryGivesElevenSensorsWithoutLocation() throws {
        let r = try SensorsCSVImporter.parse(try F.bytes("ajl_sensors", "csv"), file: "ajl_sensors.csv",
                                             options: ImportOptions())
        #expect(r.rowsRead == 11 && r.issues.isEmpty)
        let regs = F.registrations(r)
        #expect(regs.count == 11 && r.records.count == 11)
        #expect(regs.map(\.line) == Array(2...12))
        #expect(regs.map(\.registration.sensor) == ["87173", "149970", "151502", "166331", "166327", "166371",
                                                    "164351", "156171", "156051", "164327", "166653"])
        #expect(regs[0].registration == SensorRegistration(sensor: "87173", name: "North Central Troy #1",
                                                           source: "purpleair", kind: "purpleair",
                                                           latitude: nil, longitude: nil, timeZone: nil))
        #expect(regs[8].registration.name == "Cohoes")
        #expect(regs[10].registration.name == "Stephentown #22")
        #expect(regs.allSatisfy { $0.registration.latitude == nil && $0.registration.longitude == nil })
        #expect(r.records.allSatisfy { $0.stream == .public })
    }

    @Test func theOkanoganRegistryGives122SensorsWithLocationAndTimeZone() throws {
        let r = try SensorsCSVImporter.parse(try F.bytes("airsensor2_example_pas_metadata_okanogan", "csv"),
                                             file: "okanogan.csv", options: ImportOptions())
        // python3 csv: 122 rows, 122 distinct sensor_index, none missing name/latitude/longitude/timezone.
        #expect(r.rowsRead == 122 && r.issues.isEmpty)
        let regs = F.registrations(r).map(\.registration)
        #expect(regs.count == 122 && Set(regs.map(\.sensor)).count == 122)
        #expect(regs.allSatisfy { $0.latitude != nil && $0.longitude != nil && $0.timeZone == "America/Los_Angeles" })
        #expect(regs.allSatisfy { $0.source == "purpleair" && $0.kind == "purpleair" })
        #expect(regs[0] == SensorRegistration(sensor: "6416", name: "Mid-Valley Clinic", source: "purpleair",
                                              kind: "purpleair", latitude: 48.402916, longitude: -119.54045,
                                              timeZone: "America/Los_Angeles"))
        #expect(regs[121] == SensorRegistration(sensor: "206425", name: "Promise Land Tannery", source: "purpleair",
                                                kind: "purpleair", latitude: 48.26224, longitude: -119.561134,
                                                timeZone: "America/Los_Angeles"))
        // Line 98 has a quoted name with a comma.
        let oroville = try #require(F.registrations(r).first { $0.line == 98 }).registration
        #expect(oroville.sensor == "120787" && oroville.name == "Oroville (City Limits), Washington")
        #expect(oroville.latitude == 48.944813 && oroville.longitude == -119.438065)
    }

    @Test func atLocatesTheSensorOfASingleRowFile() throws {
        let csv = "id,name,start,end\n87173,North Central Troy #1,2022-07-01T13:20:00,2024-06-12T22:10:00\n"
        let r = try SensorsCSVImporter.parse(Array(csv.utf8), file: "one.csv", options: Self.options(at: (42.74, -73.68)))
        #expect(F.registrations(r).map(\.registration) == [SensorRegistration(
            sensor: "87173", name: "North Central Troy #1", source: "purpleair", kind: "purpleair",
            latitude: 42.74, longitude: -73.68, timeZone: nil)])
    }

    @Test func atWithAManyRowFileIsRefused() throws {
        let bytes = try F.bytes("ajl_sensors", "csv")
        #expect(throws: ImportError.self) {
            try SensorsCSVImporter.parse(bytes, file: "ajl_sensors.csv", options: Self.options(at: (42.74, -73.68)))
        }
    }

    @Test func optionalColumnsAndBadRows() throws {
        let csv = """
            sensor,locationName,lat,lon,source,tz
            370630099,Burdens Creek,35.8894,-78.8747,AirNow,America/New_York
            6416.0,,48.4,-119.5,,
            1,A,48.4,,,
            2,B,95,-119.5,,
            ,C,1,1,,
            3,D,north,1,,
            ,,,,,
            4,E
            5,F,NA,-999,openaq,

            """
        let r = try SensorsCSVImporter.parse(Array(csv.utf8), file: "reg.csv", options: ImportOptions())
        #expect(r.rowsRead == 9)
        #expect(r.issues.map(\.line) == [4, 5, 6, 7, 8, 9])
        #expect(r.issues.map(\.reason) == ["latitude without longitude", "latitude 95.0 is out of range",
                                           "missing sensor id", "lat 'north' is not a number", "no values",
                                           "row has 2 fields, the header has 6"])
        #expect(F.registrations(r).map(\.registration) == [
            SensorRegistration(sensor: "370630099", name: "Burdens Creek", source: "airnow", kind: "monitor",
                               latitude: 35.8894, longitude: -78.8747, timeZone: "America/New_York"),
            SensorRegistration(sensor: "6416", name: "PurpleAir 6416", source: "purpleair", kind: "purpleair",
                               latitude: 48.4, longitude: -119.5, timeZone: nil),
            SensorRegistration(sensor: "5", name: "F", source: "openaq", kind: "monitor",
                               latitude: nil, longitude: nil, timeZone: nil),
        ])
        #expect(F.registrations(r).map(\.line) == [2, 3, 10])
    }

    @Test func nameWinsOverLocationNameAndFillsFromIt() throws {
        let csv = "sensor_index,locationName,name\n1,Place,Sensor\n2,Place only,\n"
        let r = try SensorsCSVImporter.parse(Array(csv.utf8), file: "x.csv", options: ImportOptions())
        #expect(F.registrations(r).map(\.registration.name) == ["Sensor", "Place only"])
    }

    @Test func filesOfOtherFormatsAreRefused() throws {
        let json = try F.bytes("get_sensors_response", "json", "api_v1_responses_aiopurpleair")
        let cases: [(String, [UInt8], String)] = [
            ("json", json, "no id, sensor_index or sensor column"),
            ("no id column", Array("name,latitude,longitude\nA,1,2\n".utf8), "no id, sensor_index or sensor column"),
            ("no name column", Array("id,latitude,longitude\n1,1,2\n".utf8), "no name or locationName column"),
            ("empty", [], "empty file"),
        ]
        for (what, bytes, message) in cases {
            do {
                _ = try SensorsCSVImporter.parse(bytes, file: "x", options: ImportOptions())
                Issue.record("\(what) was accepted")
            } catch {
                #expect(error.message.contains(message), "\(what): \(error.message)")
            }
        }
    }
}
