/// The steps between an hour's consecutive readings, as (step seconds, how many), by step: `HourAggregate.steps`.
///
/// Nearly every hour has one or two distinct steps (a sensor reporting every 2 or 10 minutes), so the first
/// two are kept inline and only a third goes to an array: a map of a city decodes tens of thousands of hours,
/// and an array each (an allocation, and a retain at every copy) was a sixth of its time (issue 30).
public struct StepCounts: RandomAccessCollection, ExpressibleByArrayLiteral, Equatable, Sendable {
    public typealias Step = HourAggregate.Step
    private var first = Step(seconds: 0, count: 0), second = Step(seconds: 0, count: 0)
    private var more: [Step] = []
    public private(set) var count = 0

    public init() {}
    public init(arrayLiteral elements: Step...) { for e in elements { append(e) } }
    public init(_ elements: some Sequence<Step>) { for e in elements { append(e) } }

    public var startIndex: Int { 0 }
    public var endIndex: Int { count }

    public subscript(i: Int) -> Step {
        get {
            precondition(i >= 0 && i < count, "StepCounts index \(i) out of range 0..<\(count)")
            switch i {
            case 0: return first
            case 1: return second
            default: return more[i - 2]
            }
        }
        set {
            precondition(i >= 0 && i < count, "StepCounts index \(i) out of range 0..<\(count)")
            switch i {
            case 0: first = newValue
            case 1: second = newValue
            default: more[i - 2] = newValue
            }
        }
    }

    /// Adds `step` at the end (the caller keeps the order by step).
    public mutating func append(_ step: Step) {
        switch count {
        case 0: first = step
        case 1: second = step
        default: more.append(step)
        }
        count += 1
    }

    /// Counts one more step of `seconds`, keeping the steps ordered by length.
    public mutating func add(seconds: Int64) {
        var i = 0
        while i < count, self[i].seconds < seconds { i += 1 }
        if i < count, self[i].seconds == seconds {
            self[i].count += 1
            return
        }
        // Insert at i: append, then move it down into place.
        append(Step(seconds: seconds, count: 1))
        var j = count - 1
        while j > i {
            let t = self[j - 1]
            self[j - 1] = self[j]
            self[j] = t
            j -= 1
        }
    }

    public static func == (a: StepCounts, b: StepCounts) -> Bool { a.elementsEqual(b) }
}
