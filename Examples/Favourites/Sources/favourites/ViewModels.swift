// What a SwiftUI app writes over `import Breeze`, compiled in the test suite (`tools/test.sh` builds this
// package with warnings as errors): `import Observation` beside `import Breeze` (no Breeze type shadows the
// module), an `@Observable` view model fed by an observation whose loop throws `BreezeError`, parameters that
// key `.task(id:)`, state that is stored as JSON, and every list of every screen's model iterated as SwiftUI's
// `ForEach` needs (elements `Identifiable`). SwiftUI is not on Linux: `rows(_:)` and `taskID(_:)` state the
// same requirements as `ForEach(_:content:)` and `.task(id:)`.
import Breeze
import Foundation
import Observation

/// The sensor sheet's view model, as an app's `@Observable` class.
@MainActor @Observable
final class SheetViewModel {
    var sheet: SheetScreen.Model?
    var failure: BreezeError?

    /// Follows the sheet of `sensor` until the task is cancelled; an error ends it with a `BreezeError` (typed:
    /// no cast from `any Error`).
    func follow(_ replica: Replica, sensor: String) async {
        do {
            for try await model in replica.observe(SheetScreen.self, replica.parameters(sensor: sensor)) {
                sheet = model
            }
        } catch {
            failure = error
            print(error.description)
        }
    }
}

/// `ForEach`'s requirement on its data.
func rows<C: RandomAccessCollection>(_ data: C) -> [C.Element.ID] where C.Element: Identifiable { data.map(\.id) }

/// `.task(id:)`'s requirement on its key.
func taskID<ID: Equatable>(_ id: ID) -> ID { id }

/// Every list of every screen, as the designs iterate them; the models that are stored, encoded.
func everyList(nearby: NearbyScreen.Model, map: MapScreen.Model, pollen: PollenScreen.Model, climate: ClimateScreen.Model,
               history: HistoryScreen.Model, detail: DetailScreen.Model, sheet: SheetScreen.Model, alerts: AlertsScreen.Model,
               sources: SourcesScreen.Model, biomarkers: BiomarkerScreen.Model, status: SyncStatus, state: UserState,
               summary: Replica.ImportSummary, parameters: ScreenParameters) throws -> Int {
    var n = rows(nearby.others).count + rows(nearby.favourites).count + rows(map.pins).count
    n += rows(pollen.items).count + rows(pollen.scale).count + pollen.items.map { rows($0.scale).count }.reduce(0, +)
    n += rows(climate.data).count + rows(history.thisWeek).count + rows(history.lastWeek).count + rows(history.today).count
    n += rows(detail.hourly).count + rows(sheet.legend).count + rows(alerts.watched).count + rows(alerts.events).count
    n += rows(sources.sources).count + rows(biomarkers.biomarkers).count + rows(status.peers).count
    // The design reads `item.level`: the UPI level, its title and colour.
    n += pollen.items.compactMap { $0.level.map { "\($0.title) \($0.swatchColour)" } }.count
    _ = taskID(parameters)
    let encoder = JSONEncoder()
    n += try encoder.encode(state).count + encoder.encode(status).count + encoder.encode(summary).count
    return n
}
