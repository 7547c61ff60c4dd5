/// Every format `breeze import` knows, by command-line name.
public enum Importers {
    /// The importers, in the order `breeze import --help` lists them.
    public static let all: [any Importer.Type] = [
        PurpleAirCSVImporter.self, PurpleAirJSONImporter.self, SensorsCSVImporter.self,
        AirNowTechCSVImporter.self, AirNowAPIImporter.self, AQSImporter.self, AirDataDailyImporter.self, OpenAQImporter.self,
        GooglePollenImporter.self, DailyTemperatureImporter.self, GlucoseCSVImporter.self,
    ]

    /// The importer for a format name.
    public static func named(_ format: String) -> (any Importer.Type)? { all.first { $0.format == format } }
}
