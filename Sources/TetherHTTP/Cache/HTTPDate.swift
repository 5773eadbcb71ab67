import Foundation

/// HTTP-date (RFC 9110 §5.6.7), read strictly: IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`) and the obsolete
/// RFC 850 (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime (`Sun Nov  6 08:49:37 1994`) forms, with their exact
/// separators, two-digit times and `GMT`. Names are matched without case. Anything else is not a date: a cache treats
/// an invalid `Expires` as already expired (RFC 9111 §5.3), and a lenient parser would read `UTC`, `2:01:18` or
/// `18-Aug-2050` as valid.
enum HTTPDate {
    private static let days = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
    private static let longDays = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    /// The date `text` stands for, or nil; an RFC 850 two-digit year more than 50 years after `now` is a past year.
    static func parse(_ text: String, now: Date = Date()) -> Date? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 24, bytes.count <= 40 else { return nil }
        if let comma = bytes.firstIndex(of: UInt8(ascii: ",")) {
            let day = Self.lowered(bytes[..<comma])
            if comma == 3, self.days.contains(day) { return self.imfFixdate(bytes) }
            if self.longDays.contains(day) { return self.rfc850(bytes[(comma + 1)...], now: now) }
            return nil
        }
        return self.asctime(bytes)
    }

    /// `Sun, 06 Nov 1994 08:49:37 GMT`.
    private static func imfFixdate(_ bytes: [UInt8]) -> Date? {
        guard bytes.count == 29, bytes[4] == 0x20, bytes[7] == 0x20, bytes[11] == 0x20, bytes[16] == 0x20,
            bytes[25] == 0x20, Self.lowered(bytes[26...]) == "gmt",
            let day = Self.number(bytes[5..<7]), let month = Self.month(bytes[8..<11]),
            let year = Self.number(bytes[12..<16])
        else { return nil }
        return self.date(year: year, month: month, day: day, time: bytes[17..<25])
    }

    /// `, 06-Nov-94 08:49:37 GMT` (what follows the day name).
    private static func rfc850(_ rest: ArraySlice<UInt8>, now: Date) -> Date? {
        let bytes = Array(rest)
        guard bytes.count == 23, bytes[0] == 0x20, bytes[3] == 0x2D, bytes[7] == 0x2D, bytes[10] == 0x20,
            bytes[19] == 0x20, Self.lowered(bytes[20...]) == "gmt",
            let day = Self.number(bytes[1..<3]), let month = Self.month(bytes[4..<7]),
            let shortYear = Self.number(bytes[8..<10])
        else { return nil }
        let currentYear =
            Calendar(identifier: .gregorian).dateComponents(in: TimeZone(identifier: "GMT")!, from: now)
            .year ?? 2000
        var year = currentYear - currentYear % 100 + shortYear
        if year > currentYear + 50 { year -= 100 }
        return self.date(year: year, month: month, day: day, time: bytes[11..<19])
    }

    /// `Sun Nov  6 08:49:37 1994`.
    private static func asctime(_ bytes: [UInt8]) -> Date? {
        guard bytes.count == 24, bytes[3] == 0x20, bytes[7] == 0x20, bytes[10] == 0x20, bytes[19] == 0x20,
            self.days.contains(Self.lowered(bytes[0..<3])), let month = Self.month(bytes[4..<7]),
            let year = Self.number(bytes[20..<24])
        else { return nil }
        let day: Int?
        if bytes[8] == 0x20 {
            day = Self.number(bytes[9..<10])
        } else {
            day = Self.number(bytes[8..<10])
        }
        guard let day else { return nil }
        return self.date(year: year, month: month, day: day, time: bytes[11..<19])
    }

    /// The date of `year-month-day` at `HH:MM:SS` (`time`), UTC; nil when out of range.
    private static func date(year: Int, month: Int, day: Int, time: ArraySlice<UInt8>) -> Date? {
        let time = Array(time)
        guard time.count == 8, time[2] == 0x3A, time[5] == 0x3A,
            let hour = Self.number(time[0..<2]), let minute = Self.number(time[3..<5]),
            let second = Self.number(time[6..<8]),
            hour < 24, minute < 60, second <= 60, day >= 1, day <= 31
        else { return nil }
        // Days since 1970-01-01 of the proleptic Gregorian date (Howard Hinnant's days_from_civil).
        let shifted = month <= 2 ? year - 1 : year
        let era = (shifted >= 0 ? shifted : shifted - 399) / 400
        let yearOfEra = shifted - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        return Date(timeIntervalSince1970: TimeInterval(days * 86_400 + hour * 3_600 + minute * 60 + second))
    }

    private static func number(_ digits: ArraySlice<UInt8>) -> Int? {
        var value = 0
        for digit in digits {
            guard digit >= 0x30, digit <= 0x39 else { return nil }
            value = value * 10 + Int(digit - 0x30)
        }
        return digits.isEmpty ? nil : value
    }

    private static func month(_ name: ArraySlice<UInt8>) -> Int? {
        self.months.firstIndex(of: Self.lowered(name)).map { $0 + 1 }
    }

    private static func lowered(_ bytes: ArraySlice<UInt8>) -> String {
        String(decoding: bytes.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }, as: UTF8.self)
    }
}
