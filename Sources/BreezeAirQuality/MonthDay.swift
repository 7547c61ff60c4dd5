/// A calendar day without a year, e.g. "July 4", for "this day across decades" comparisons
/// (`shared/docs/domain.md` sections 8 and 9).
///
/// February 29 exists only in leap years; in other years it stands for February 28 (domain.md section 9),
/// so a Feb 29 birthday chart still has one value per year.
public struct MonthDay: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// 1...12.
    public let month: Int
    /// 1...31, valid for `month` in a leap year.
    public let day: Int

    /// Makes a day; nil when it exists in no year (April 31, February 30).
    public init?(month: Int, day: Int) {
        guard (1...12).contains(month), day >= 1, day <= MonthDay.daysIn(month: month, leapYear: true) else {
            return nil
        }
        self.month = month
        self.day = day
    }

    /// The day to use in `year`: itself, except February 29 in a common year, which becomes February 28.
    public func resolved(inYear year: Int) -> MonthDay {
        if month == 2 && day == 29 && !MonthDay.isLeapYear(year) {
            return MonthDay(uncheckedMonth: 2, day: 28)
        }
        return self
    }

    /// Gregorian leap years: divisible by 4, except centuries not divisible by 400.
    public static func isLeapYear(_ year: Int) -> Bool {
        (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
    }

    /// Days in `month` (1...12).
    public static func daysIn(month: Int, leapYear: Bool) -> Int {
        switch month {
        case 2: return leapYear ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    private init(uncheckedMonth month: Int, day: Int) {
        self.month = month
        self.day = day
    }

    /// `MM-DD`.
    public var description: String {
        (month < 10 ? "0" : "") + String(month) + "-" + (day < 10 ? "0" : "") + String(day)
    }

    /// Calendar order.
    public static func < (a: MonthDay, b: MonthDay) -> Bool { (a.month, a.day) < (b.month, b.day) }
}
