import Foundation

/// Every screen `breeze screen` knows.
public enum Screens {
    /// The screens, in the order `breeze screen --help` lists them.
    public static let all: [any Screen.Type] = [
        MapScreen.self, SheetScreen.self, DetailScreen.self, HistoryScreen.self, NearbyScreen.self, AlertsScreen.self,
        WidgetsScreen.self,
        SourcesScreen.self, PollenScreen.self, ClimateScreen.self, BiomarkerScreen.self,
    ]

    /// The screen with this name.
    public static func named(_ name: String) -> (any Screen.Type)? { all.first { $0.name == name } }

    /// The stable JSON form of a read model: keys sorted, no spaces, so equal models give equal bytes.
    public static func json<M: Encodable>(_ model: M) throws -> String {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try e.encode(model), as: UTF8.self)
    }
}
