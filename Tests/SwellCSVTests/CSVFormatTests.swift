import Foundation
import Testing
@testable import SwellCSV

@Test func doublesAreWholeOrShortestPositionalDecimals() {
    let cases: [(Double, String)] = [
        (0, "0"),
        (-0.0, "0"),
        (100, "100"),
        (-3, "-3"),
        (1e20, "100000000000000000000"),
        (0.1, "0.1"),
        (12.75, "12.75"),
        (-12.75, "-12.75"),
        (1.0 / 3, "0.3333333333333333"),
        (1e-7, "0.0000001"),
        (-1.5e-5, "-0.000015"),
        (123456789.125, "123456789.125"),
        (9007199254740992, "9007199254740992"),
        (1e16, "10000000000000000"),
        (2.5e-3, "0.0025"),
        (Double.greatestFiniteMagnitude, "17976931348623157" + String(repeating: "0", count: 292)),
        (Double.leastNonzeroMagnitude, "0." + String(repeating: "0", count: 323) + "5"),
    ]
    for (value, expected) in cases {
        #expect(CSVFormat.double(value) == expected, "\(value)")
    }
}

@Test func nonFiniteDoublesUseSwiftsReadableSpellings() {
    #expect(CSVFormat.double(.nan) == "nan")
    #expect(CSVFormat.double(.infinity) == "inf")
    #expect(CSVFormat.double(-.infinity) == "-inf")
}

@Test func doublesReadBackAsTheSameValueWithoutExponent() {
    var generator = SeededGenerator(state: 20_240_501)
    var values: [Double] = []
    for _ in 0..<50_000 {
        let bits = Double(bitPattern: generator.next())
        if bits.isFinite { values.append(bits) }
        values.append(Double.random(in: -1e6...1e6, using: &generator))
        values.append((Double.random(in: 0...100_000, using: &generator) * 100).rounded() / 100)
    }
    var failures: [String] = []
    for value in values {
        let text = CSVFormat.double(value)
        if Double(text) != value || text.contains("e") || text.hasSuffix(".0") {
            failures.append("\(value) -> \(text)")
        }
    }
    #expect(failures.isEmpty, "\(failures.prefix(5))")
}

@Test func integersAndBooleans() {
    #expect(CSVFormat.integer(0) == "0")
    #expect(CSVFormat.integer(-42) == "-42")
    #expect(CSVFormat.integer(.max) == "9223372036854775807")
    #expect(CSVFormat.boolean(true) == "true")
    #expect(CSVFormat.boolean(false) == "false")
}

@Test func isoDateHasMillisecondsOnlyWhenNotZero() {
    #expect(CSVFormat.isoDate(1_714_545_000) == "2024-05-01T06:30:00Z")
    #expect(CSVFormat.isoDate(1_714_545_000.25) == "2024-05-01T06:30:00.250Z")
    #expect(CSVFormat.isoDate(1_714_545_000.007) == "2024-05-01T06:30:00.007Z")
    #expect(CSVFormat.isoDate(0) == "1970-01-01T00:00:00Z")
    #expect(CSVFormat.isoDate(951_825_600) == "2000-02-29T12:00:00Z")
}

@Test func isoDateHandlesTimesBefore1970() {
    #expect(CSVFormat.isoDate(-1) == "1969-12-31T23:59:59Z")
    #expect(CSVFormat.isoDate(-0.25) == "1969-12-31T23:59:59.750Z")
    #expect(CSVFormat.isoDate(-2_208_988_800) == "1900-01-01T00:00:00Z")
    #expect(CSVFormat.isoDate(-62_167_219_200) == "0000-01-01T00:00:00Z")
    #expect(CSVFormat.isoDate(-62_167_219_201) == "-0001-12-31T23:59:59Z")
    #expect(CSVFormat.isoDate(253_402_300_800) == "+10000-01-01T00:00:00Z")
}

@Test func isoDateRoundsToTheNearestMillisecondWithCarry() {
    #expect(CSVFormat.isoDate(0.9995) == "1970-01-01T00:00:01Z")
    #expect(CSVFormat.isoDate(0.0004) == "1970-01-01T00:00:00Z")
    #expect(CSVFormat.isoDate(0.0006) == "1970-01-01T00:00:00.001Z")
    #expect(CSVFormat.isoDate(86_399.9999) == "1970-01-02T00:00:00Z")
    #expect(CSVFormat.isoDate(-0.0001) == "1970-01-01T00:00:00Z")
}

@Test func isoDateOfNonFiniteIsEmpty() {
    #expect(CSVFormat.isoDate(.nan) == "")
    #expect(CSVFormat.isoDate(.infinity) == "")
    #expect(CSVFormat.isoDate(1e300) == "")
}

@Test func isoDateAgreesWithCivilCalendarOverManyDays() {
    var generator = SeededGenerator(state: 7)
    for _ in 0..<2000 {
        let seconds = Double(Int64.random(in: -5_000_000_000...10_000_000_000, using: &generator))
        let text = CSVFormat.isoDate(seconds)
        #expect(CSVFormat.parseISODate(text) == seconds, "\(seconds) -> \(text)")
    }
}

@Test func datePatternsFormatInUTC() {
    #expect(CSVFormat.date(1_714_545_000, pattern: "yyyy-MM-dd") == "2024-05-01")
    #expect(CSVFormat.date(1_714_545_000, pattern: "dd/MM/yyyy HH:mm") == "01/05/2024 06:30")
    #expect(CSVFormat.date(-1, pattern: "yyyy-MM-dd HH:mm:ss") == "1969-12-31 23:59:59")
    #expect(CSVFormat.date(1_714_545_000.25, pattern: "HH:mm:ss.SSS") == "06:30:00.250")
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
        let parsed = CSVFormat.parseISODate(text)
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
        #expect(CSVFormat.parseISODate(text) == nil, "\(text)")
    }
}

@Test func parseDateReadsAPatternInUTCUnlessItHasAZone() {
    #expect(CSVFormat.parseDate("01/05/2024 06:30", pattern: "dd/MM/yyyy HH:mm") == 1_714_545_000)
    #expect(CSVFormat.parseDate("2024-05-01", pattern: "yyyy-MM-dd") == 1_714_521_600)
    #expect(CSVFormat.parseDate("2024-05-01 08:30 +0200", pattern: "yyyy-MM-dd HH:mm Z") == 1_714_545_000)
    #expect(CSVFormat.parseDate("2024-05-01", pattern: "dd/MM/yyyy HH:mm") == nil)
    #expect(CSVFormat.parseDate("31/02/2024 06:30", pattern: "dd/MM/yyyy HH:mm") == nil)
    #expect(CSVFormat.parseDate("nonsense", pattern: "yyyy-MM-dd") == nil)
}
