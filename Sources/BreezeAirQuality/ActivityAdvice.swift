/// What to do at an AQI category, for sensitive groups and for everyone else: the EPA *Air Quality Guide for
/// Particle Pollution*, EPA-456/F-15-005 (https://nepis.epa.gov/Exe/ZyPURL.cgi?Dockey=P100N1JG.txt), as
/// tabled in `shared/docs/domain.md` section 1.5.
///
/// The guide's own wording is kept, with one fix: its "contact your heath care provider" is spelled
/// "health" here.
public struct ActivityAdvice: Hashable, Sendable {
    /// Who the first piece of advice is for: "Unusually sensitive people" at Moderate, "Sensitive groups"
    /// otherwise (see `sensitiveGroupsDefinition`).
    public let sensitiveAudience: String
    /// The advice for `sensitiveAudience`.
    public let sensitiveGroups: String
    /// The advice for everyone else; nil where the guide gives none (Unhealthy for Sensitive Groups).
    public let everyoneElse: String?
    /// Extra lines for people with particular conditions (asthma, heart disease); empty for most categories.
    public let notes: [String]

    /// The guide's sensitive groups for particle pollution. (The TAD's one-line cautionary statements also
    /// list people of lower socioeconomic status; domain.md marks that difference [?].)
    public static let sensitiveGroupsDefinition =
        "people with heart or lung disease, older adults, children and teenagers"

    /// Makes advice.
    public init(sensitiveAudience: String, sensitiveGroups: String, everyoneElse: String?, notes: [String] = []) {
        self.sensitiveAudience = sensitiveAudience
        self.sensitiveGroups = sensitiveGroups
        self.everyoneElse = everyoneElse
        self.notes = notes
    }

    /// The particle pollution (PM2.5) advice for a category.
    public static func particlePollution(_ level: AQILevel) -> ActivityAdvice {
        let sensitive = "Sensitive groups"
        switch level {
        case .good:
            let text = "It's a great day to be active outside."
            return ActivityAdvice(sensitiveAudience: sensitive, sensitiveGroups: text, everyoneElse: text)
        case .moderate:
            return ActivityAdvice(
                sensitiveAudience: "Unusually sensitive people",
                sensitiveGroups: "Consider reducing prolonged or heavy exertion. Watch for symptoms such as "
                    + "coughing or shortness of breath. These are signs to take it easier.",
                everyoneElse: "It's a good day to be active outside.")
        case .usg:
            return ActivityAdvice(
                sensitiveAudience: sensitive,
                sensitiveGroups: "Reduce prolonged or heavy exertion. It's OK to be active outside, but take more "
                    + "breaks and do less intense activities. Watch for symptoms such as coughing or shortness "
                    + "of breath.",
                everyoneElse: nil,
                notes: [
                    "People with asthma should follow their asthma action plans and keep quick relief medicine "
                        + "handy.",
                    "If you have heart disease: Symptoms such as palpitations, shortness of breath, or unusual "
                        + "fatigue may indicate a serious problem. If you have any of these, contact your health "
                        + "care provider.",
                ])
        case .unhealthy:
            return ActivityAdvice(
                sensitiveAudience: sensitive,
                sensitiveGroups: "Avoid prolonged or heavy exertion. Consider moving activities indoors or "
                    + "rescheduling.",
                everyoneElse: "Reduce prolonged or heavy exertion. Take more breaks during outdoor activities.")
        case .veryUnhealthy:
            return ActivityAdvice(
                sensitiveAudience: sensitive,
                sensitiveGroups: "Avoid all physical activity outdoors. Move activities indoors or reschedule to "
                    + "a time when air quality is better.",
                everyoneElse: "Avoid prolonged or heavy exertion. Consider moving activities indoors or "
                    + "rescheduling to a time when air quality is better.")
        case .hazardous:
            return ActivityAdvice(
                sensitiveAudience: sensitive,
                sensitiveGroups: "Remain indoors and keep activity levels low. Follow tips for keeping particle "
                    + "levels low indoors.",
                everyoneElse: "Avoid all physical activity outdoors.")
        }
    }
}

extension AQILevel {
    /// The particle pollution advice for this category (`ActivityAdvice.particlePollution(_:)`).
    public var particleAdvice: ActivityAdvice { ActivityAdvice.particlePollution(self) }
}
