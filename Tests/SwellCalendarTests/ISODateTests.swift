import SwellCalendar
import SwellTestSupport
import Testing

/// ISO-8601 dates as Swell writes them (CSV cells, the report) and reads them
/// (record values, predicate literals).
private let mayFirstDawn: Double = 1_714_545_000

@Test func isoDateHasMillisecondsOnlyWhenNotZero() {
    #expect(ISODate.string(fromSeconds: 1_714_545_000) == "2024-05-01T06:30:00Z")
    #expect(ISODate.string(fromSeconds: 1_714_545_000.25) == "2024-05-01T06:30:00.250Z")
    #expect(ISODate.string(fromSeconds: 1_714_545_000.007) == "2024-05-01T06:30:00.007Z")
    #expect(ISODate.string(fromSeconds: 0) == "1970-01-01T00:00:00Z")
    #expect(ISODate.string(fromSeconds: 951_825_600) == "2000-02-29T12:00:00Z")
}

@Test func isoDateHandlesTimesBefore1970() {
    #expect(ISODate.string(fromSeconds: -1) == "1969-12-31T23:59:59Z")
    #expect(ISODate.string(fromSeconds: -0.25) == "1969-12-31T23:59:59.750Z")
    #expect(ISODate.string(fromSeconds: -2_208_988_800) == "1900-01-01T00:00:00Z")
    #expect(ISODate.string(fromSeconds: -62_167_219_200) == "0000-01-01T00:00:00Z")
    #expect(ISODate.string(fromSeconds: -62_167_219_201) == "-0001-12-31T23:59:59Z")
    #expect(ISODate.string(fromSeconds: 253_402_300_800) == "+10000-01-01T00:00:00Z")
}

@Test func isoDateRoundsToTheNearestMillisecondWithCarry() {
    #expect(ISODate.string(fromSeconds: 0.9995) == "1970-01-01T00:00:01Z")
    #expect(ISODate.string(fromSeconds: 0.0004) == "1970-01-01T00:00:00Z")
    #expect(ISODate.string(fromSeconds: 0.0006) == "1970-01-01T00:00:00.001Z")
    #expect(ISODate.string(fromSeconds: 86_399.9999) == "1970-01-02T00:00:00Z")
    #expect(ISODate.string(fromSeconds: -0.0001) == "1970-01-01T00:00:00Z")
}

@Test func isoDateOfNonFiniteIsEmpty() {
    #expect(ISODate.string(fromSeconds: .nan) == "")
    #expect(ISODate.string(fromSeconds: .infinity) == "")
    #expect(ISODate.string(fromSeconds: 1e300) == "")
}

@Test func isoDateAgreesWithCivilCalendarOverManyDays() {
    var generator = SeededGenerator(state: 7)
    for _ in 0..<2000 {
        let seconds = Double(Int64.random(in: -5_000_000_000...10_000_000_000, using: &generator))
        let text = ISODate.string(fromSeconds: seconds)
        #expect(ISODate.seconds(from: text) == seconds, "\(seconds) -> \(text)")
    }
}

@Test func parseISODateAcceptsTheFormsAPIsSend() {
    let cases: [(String, Double)] = [
        ("2024-05-01T06:30:00Z", 1_714_545_000),
        ("2024-05-01t06:30:00z", 1_714_545_000),
        ("2024-05-01T06:30:00.250Z", 1_714_545_000.25),
        ("2024-05-01T06:30:00,5Z", 1_714_545_000.5),
        ("2024-05-01T06:30:00.123456789Z", 1_714_545_000.123456789),
        ("2024-05-01T08:30:00+02:00", 1_714_545_000),
        ("2024-05-01T08:30:00+0200", 1_714_545_000),
        ("2024-05-01T08:30:00+02", 1_714_545_000),
        ("2024-05-01T01:00:00-05:30", 1_714_545_000),
        ("2024-05-01 06:30:00", 1_714_545_000),
        ("2024-05-01T06:30", 1_714_545_000),
        ("2024-05-01", 1_714_521_600),
        ("1969-12-31T23:59:59Z", -1),
        ("2000-02-29T12:00:00Z", 951_825_600),
    ]
    for (text, expected) in cases {
        let parsed = ISODate.seconds(from: text)
        #expect(parsed.map { abs($0 - expected) < 1e-6 } == true, "\(text) -> \(String(describing: parsed))")
    }
}

@Test func parseISODateRejectsWhatIsNotSuchADate() {
    let invalid = [
        "", "2024", "2024-05", "2024-5-01", "24-05-01", "2024-13-01", "2024-00-10", "2023-02-29",
        "2024-04-31", "2024-05-01T", "2024-05-01T25:00:00Z", "2024-05-01T24:00:00Z", "2024-05-01T06:60:00Z",
        "2024-05-01T06:30:60Z", "2024-05-01T06:30:00.Z", "2024-05-01T06:30:00Zjunk", " 2024-05-01",
        "2024-05-01 ", "2024-05-01T06:30:00+2", "2024-05-01T06:30:00+02:0", "2024/05/01", "not a date",
        "1714545000",
    ]
    for text in invalid {
        #expect(ISODate.seconds(from: text) == nil, "\(text)")
    }
}

@Test func isoLiteralsParse() {
    #expect(ISODate.seconds(from: "1970-01-01") == 0)
    #expect(ISODate.seconds(from: "1969-12-31T23:59:59Z") == -1)
    #expect(ISODate.seconds(from: "2024-05-01T06:30:00Z") == mayFirstDawn)
    #expect(ISODate.seconds(from: "2024-05-01T06:30Z") == mayFirstDawn)
    #expect(ISODate.seconds(from: "2024-05-01 06:30:00") == mayFirstDawn)
    #expect(ISODate.seconds(from: "2024-05-01T12:00:00+05:30") == mayFirstDawn)
    #expect(ISODate.seconds(from: "2024-02-29") == 1_709_164_800)
    #expect(ISODate.seconds(from: "2023-02-29") == nil)
    #expect(ISODate.seconds(from: "2024-05-01T24:00:00Z") == nil)
    #expect(ISODate.seconds(from: "2024-05-01T06:30:00Zjunk") == nil)
    #expect(ISODate.seconds(from: "May 1, 2024") == nil)
}

@Test func civilDaysRoundTripAndKnowLeapYears() {
    #expect(CivilDate.days(year: 1970, month: 1, day: 1) == 0)
    #expect(CivilDate.days(year: 2000, month: 3, day: 1) == 11_017)
    #expect(CivilDate.civil(fromDays: -1) == (1969, 12, 31))
    for days in stride(from: Int64(-800_000), through: 800_000, by: 997) {
        let (year, month, day) = CivilDate.civil(fromDays: days)
        #expect(CivilDate.days(year: year, month: month, day: day) == days)
    }
    #expect(CivilDate.daysInMonth(year: 2024, month: 2) == 29)
    #expect(CivilDate.daysInMonth(year: 1900, month: 2) == 28)
    #expect(CivilDate.daysInMonth(year: 2000, month: 2) == 29)
}

@Test func isoDateWrittenIntoBytesIsTheSameText() {
    var bytes = [UInt8](repeating: 0, count: ISODate.maximumLength)
    for seconds in [0, 1_700_000_000.5, -86_400 * 800_000, 1e14, 253_402_300_800, -1.0005, .nan, .infinity] {
        let length = bytes.withUnsafeMutableBufferPointer { ISODate.write(fromSeconds: seconds, into: $0) }
        #expect(String(decoding: bytes[..<length], as: UTF8.self) == ISODate.string(fromSeconds: seconds))
    }
}
