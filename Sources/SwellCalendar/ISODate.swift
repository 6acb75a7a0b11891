/// ISO-8601 dates as Swell reads and writes them, in UTC, without Foundation's
/// formatters (no ICU): the CSV writer's date cells, predicates' date
/// literals, record values and the run report all use these.
public enum ISODate {
    /// Parses ISO-8601 date-times as APIs send them: "2024-05-01T06:30:00Z", fractional seconds, offsets "+02:00"/"+0200", "2024-05-01 06:30:00" (UTC), a plain date "2024-05-01"; Unix seconds returned; nil when not such a date. Fast, no DateFormatter.
    ///
    /// Accepted: a four-digit year; `T`, `t` or a space before the time; `HH:mm` with optional
    /// `:ss` and a fraction after `.` or `,` (any number of digits); then nothing (UTC), `Z`/`z`,
    /// or an offset `±HH`, `±HHmm`, `±HH:mm`. Rejected: out-of-range fields (February 30th,
    /// hour 24, second 60), surrounding spaces, anything after the zone.
    public static func seconds(from text: String) -> Double? {
        var text = text
        return text.withUTF8 { seconds(fromUTF8: $0) }
    }

    /// `seconds(from:)` of a date's UTF-8 bytes, read in place (a bulk import reads
    /// dates this way, without making a string per value).
    public static func seconds(fromUTF8 bytes: UnsafeBufferPointer<UInt8>) -> Double? {
        var scanner = ISOScanner(bytes: bytes)
        return scanner.parse()
    }

    /// ISO-8601 UTC from Unix seconds: "2024-05-01T06:30:00Z"; with ".SSS" only when the milliseconds are not zero ("2024-05-01T06:30:00.250Z"). Round to the nearest millisecond. Fast: no DateFormatter (civil-from-days arithmetic).
    ///
    /// Times before 1970 work (proleptic Gregorian calendar). Years outside 0...9999 are written
    /// with a sign and at least four digits ("-0001", "+10000"), as ISO 8601's expanded form.
    /// NaN, the infinities and times further than 10^15 seconds (about 31 million years) from 1970
    /// give "" (an empty field).
    public static func string(fromSeconds secondsSince1970: Double) -> String {
        String(unsafeUninitializedCapacity: maximumLength) { write(fromSeconds: secondsSince1970, into: $0) }
    }

    /// The most bytes `write(fromSeconds:into:)` writes.
    public static let maximumLength = 40

    /// Writes `string(fromSeconds:)`'s UTF-8 bytes at the start of `buffer` (at least
    /// `maximumLength` bytes) and returns how many it wrote: the same text, no `String` made.
    public static func write(fromSeconds secondsSince1970: Double, into buffer: UnsafeMutableBufferPointer<UInt8>) -> Int {
        precondition(buffer.count >= maximumLength, "ISODate.write needs \(maximumLength) bytes")
        guard secondsSince1970.isFinite, secondsSince1970.magnitude < 1e15 else { return 0 }
        let floor = secondsSince1970.rounded(.down)
        var milliseconds = Int64(((secondsSince1970 - floor) * 1000).rounded())
        var seconds = Int64(floor)
        if milliseconds == 1000 {
            seconds += 1
            milliseconds = 0
        }
        let days = CivilDate.floorDivide(seconds, 86_400)
        let secondOfDay = seconds - days * 86_400
        let (year, month, day) = CivilDate.civil(fromDays: days)

        do {
            var position = 0
            func put(_ byte: UInt8) {
                buffer[position] = byte
                position += 1
            }
            func put(_ number: Int64, width: Int) {
                var digits = width
                var divisor: Int64 = 1
                while digits > 1 || number / divisor >= 10 {
                    divisor *= 10
                    digits -= 1
                }
                while divisor > 0 {
                    put(UInt8(ascii: "0") + UInt8((number / divisor) % 10))
                    divisor /= 10
                }
            }
            if year < 0 {
                put(UInt8(ascii: "-"))
            } else if year > 9999 {
                put(UInt8(ascii: "+"))
            }
            put(Int64(year.magnitude), width: 4)
            put(UInt8(ascii: "-"))
            put(month, width: 2)
            put(UInt8(ascii: "-"))
            put(day, width: 2)
            put(UInt8(ascii: "T"))
            put(secondOfDay / 3600, width: 2)
            put(UInt8(ascii: ":"))
            put(secondOfDay / 60 % 60, width: 2)
            put(UInt8(ascii: ":"))
            put(secondOfDay % 60, width: 2)
            if milliseconds != 0 {
                put(UInt8(ascii: "."))
                put(milliseconds, width: 3)
            }
            put(UInt8(ascii: "Z"))
            return position
        }
    }
}

/// A one-pass reader of the ISO-8601 forms `ISODate.seconds(from:)` accepts.
private struct ISOScanner {
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0

    init(bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    mutating func parse() -> Double? {
        guard let year = number(digits: 4), take("-"),
              let month = number(digits: 2), take("-"),
              let day = number(digits: 2),
              (1...12).contains(month), (1...CivilDate.daysInMonth(year: year, month: month)).contains(day)
        else { return nil }
        let days = CivilDate.days(year: year, month: month, day: day)
        guard index < bytes.count else {
            return Double(days * 86_400)
        }
        guard take("T") || take("t") || take(" "),
              let hour = number(digits: 2), take(":"),
              let minute = number(digits: 2),
              hour < 24, minute < 60
        else { return nil }
        var second: Int64 = 0
        var fraction = 0.0
        if take(":") {
            guard let value = number(digits: 2), value < 60 else { return nil }
            second = value
            if take(".") || take(",") {
                guard let value = fractionDigits() else { return nil }
                fraction = value
            }
        }
        var offset: Int64 = 0
        if take("Z") || take("z") {
            offset = 0
        } else if index < bytes.count {
            let sign: Int64
            if take("+") {
                sign = 1
            } else if take("-") {
                sign = -1
            } else {
                return nil
            }
            guard let offsetHours = number(digits: 2), offsetHours < 24 else { return nil }
            var offsetMinutes: Int64 = 0
            if index < bytes.count {
                _ = take(":")
                guard let value = number(digits: 2), value < 60 else { return nil }
                offsetMinutes = value
            }
            offset = sign * (offsetHours * 3600 + offsetMinutes * 60)
        }
        guard index == bytes.count else { return nil }
        let whole = days * 86_400 + hour * 3600 + minute * 60 + second - offset
        return Double(whole) + fraction
    }

    private mutating func take(_ character: Unicode.Scalar) -> Bool {
        guard index < bytes.count, bytes[index] == UInt8(ascii: character) else { return false }
        index += 1
        return true
    }

    private mutating func number(digits: Int) -> Int64? {
        guard bytes.count - index >= digits else { return nil }
        var value: Int64 = 0
        for _ in 0..<digits {
            let digit = bytes[index] &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            value = value * 10 + Int64(digit)
            index += 1
        }
        return value
    }

    /// One or more digits after the decimal separator, as a fraction of a second (digits past the 18th are ignored).
    private mutating func fractionDigits() -> Double? {
        var value: Int64 = 0
        var scale: Int64 = 1
        var count = 0
        while index < bytes.count {
            let digit = bytes[index] &- UInt8(ascii: "0")
            guard digit < 10 else { break }
            if count < 18 {
                value = value * 10 + Int64(digit)
                scale *= 10
            }
            count += 1
            index += 1
        }
        guard count > 0 else { return nil }
        return Double(value) / Double(scale)
    }
}
