extension UserState {
    /// Parts of a user's state, as far as what reads them is concerned: a read model declares the parts it
    /// reads (`Screen.userAspects`), and an observation recomputes it after a commit to the user's stream only
    /// when one of the commit's events belongs to one of them (a star does not recompute the climate chart).
    public struct Aspects: OptionSet, Hashable, Sendable {
        public let rawValue: UInt16
        public init(rawValue: UInt16) { self.rawValue = rawValue }

        /// `favourites` (`favourite.add`, `favourite.remove`).
        public static let favourites = Aspects(rawValue: 1 << 0)
        /// `watched` (`watch.add`, `watch.remove`).
        public static let watched = Aspects(rawValue: 1 << 1)
        /// The alert settings: category, on-clear, enabled (`alert.set`).
        public static let alertSettings = Aspects(rawValue: 1 << 2)
        /// The temperature unit (`unit.set`).
        public static let unit = Aspects(rawValue: 1 << 3)
        /// Data sources enabled and their corrections (`source.enable`, `source.disable`, `source.correct`).
        public static let sources = Aspects(rawValue: 1 << 4)
        /// Biomarker targets (`biomarker.target`).
        public static let biomarkerTargets = Aspects(rawValue: 1 << 5)
        /// Test alerts requested (`alert.test`).
        public static let testAlerts = Aspects(rawValue: 1 << 6)
        /// Alerts delivered (`alert.delivered`).
        public static let deliveredAlerts = Aspects(rawValue: 1 << 7)
        /// Every part (and whatever a newer Breeze adds: an event type this version does not know).
        public static let all = Aspects(rawValue: .max)

        /// The parts an event of `type` in a user's stream can change: `.all` for a type this version does not
        /// know (counted in `skippedUnknown`), none for a known type that is not a user edit (a biomarker
        /// reading, a renewal request: `UserState.apply` ignores them).
        public static func changed(byType type: String) -> Aspects {
            switch type {
            case "favourite.add", "favourite.remove": return .favourites
            case "watch.add", "watch.remove": return .watched
            case "alert.set": return .alertSettings
            case "unit.set": return .unit
            case "source.enable", "source.disable", "source.correct": return .sources
            case "biomarker.target": return .biomarkerTargets
            case "alert.test": return .testAlerts
            case "alert.delivered": return .deliveredAlerts
            default: return EventBody.knownTypes[type] != nil ? [] : .all
            }
        }
    }
}
