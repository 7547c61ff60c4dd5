import Testing
import Foundation
import BreezeCore
import BreezeAirQuality
@testable import BreezeProjections

/// domain.md section 3.3: a humidity above 100 % or a temperature above 65 °C is dropped from the means. On
/// the real Troy file, rows given such values must give exactly the screens of the same rows with those cells
/// empty, and (so the test can fail) different screens from the untouched file.
struct ImplausibleValuesTests {
    typealias F = AQScreenFixtures

    /// The Troy CSV with, on 2023-10-27 (the day the fixtures' `now` looks at), the housing humidity of every
    /// 4th row of sensors 87173 and 149970 set to `humidity` and the housing temperature (°F in the file) of
    /// every 5th row set to `temperatureF`; "" leaves the cell empty.
    static func altered(humidity: String, temperatureF: String) throws -> [UInt8] {
        let text = String(decoding: try WorldSupport.bytes(WorldSupport.troyCSV, "csv"), as: UTF8.self)
        // The file's lines end in CRLF (one Character in Swift): split on the scalars, put the CR back.
        var lines = text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false).map {
            String(String.UnicodeScalarView($0.last == "\r" ? $0.dropLast() : $0))
        }
        let header = lines[0].split(separator: ",").map(String.init)
        let id = header.firstIndex(of: "id")!, time = header.firstIndex(of: "time_stamp")!
        let t = header.firstIndex(of: "temperature")!, h = header.firstIndex(of: "humidity")!
        let day = F.t("2023-10-27T00:00")..<F.t("2023-10-28T00:00")
        var n = 0
        for i in 1..<lines.count where !lines[i].isEmpty {
            var cells = lines[i].split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            guard cells.count == header.count, ["87173", "149970"].contains(cells[id]), let s = Int64(cells[time]), day.contains(s) else { continue }
            n += 1
            if n % 4 == 0 { cells[h] = humidity }
            if n % 5 == 0 { cells[t] = temperatureF }
            lines[i] = cells.joined(separator: ",")
        }
        #expect(n == 286)  // both sensors' rows of that day (python3 over the file)
        return Array(lines.joined(separator: "\r\n").utf8)
    }

    /// The screens that read the hour means, as JSON, for both sensors.
    static func screens(_ events: [Event]) throws -> [String] {
        let world = FactWorld(events: events + F.users())
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        var out: [String] = []
        for sensor in ["87173", "149970"] {
            let p = F.params("ana", F.troyNow, sensor: sensor)
            out.append(String(decoding: try encoder.encode(DetailScreen.build(world, p)), as: UTF8.self))
            out.append(String(decoding: try encoder.encode(SheetScreen.build(world, p)), as: UTF8.self))
        }
        let map = F.params("ana", F.troyNow, at: F.troyUser)
        out.append(String(decoding: try encoder.encode(MapScreen.build(world, map)), as: UTF8.self))
        return out
    }

    @Test func humidityAbove100AndTemperatureAbove65CAreLeftOutOfTheMeans() throws {
        // 150.8 °F = 66 °C, just over the limit; 101 % just over the humidity limit.
        let implausible = try Self.screens(WorldSupport.troy(csv: Self.altered(humidity: "101", temperatureF: "150.8")))
        let removed = try Self.screens(WorldSupport.troy(csv: Self.altered(humidity: "", temperatureF: "")))
        let untouched = try Self.screens(WorldSupport.troy())
        #expect(implausible == removed)
        // The same rows at the limits themselves (kept) give other screens: the equality above is the rule at
        // work, not values nobody reads.
        let atLimit = try Self.screens(WorldSupport.troy(csv: Self.altered(humidity: "100", temperatureF: "149")))
        #expect(atLimit != removed && atLimit != untouched)
    }

    @Test func theAggregateDropsEachValueOnItsOwn() {
        let hour: Int64 = 1_698_400_800
        let a = HourAggregate(hour: hour, readings: [
            (hour, ["humidity_housing": 101, "temperature_housing": 20, "humidity": 50, "temperature": 70]),
            (hour + 600, ["humidity_housing": 40, "temperature_housing": 66, "humidity": 120, "temperature": 10]),
        ])
        #expect(a.humidityHousing == HourAggregate.Sum(total: 40, count: 1))
        #expect(a.temperatureHousing == HourAggregate.Sum(total: 20, count: 1))
        #expect(a.humidity == HourAggregate.Sum(total: 50, count: 1))
        #expect(a.temperature == HourAggregate.Sum(total: 10, count: 1))
        #expect(a.count == 2)
    }
}
