import Foundation
import SwellTestSupport
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

@Test func datePatternsFormatInUTC() {
    #expect(CSVFormat.date(1_714_545_000, pattern: "yyyy-MM-dd") == "2024-05-01")
    #expect(CSVFormat.date(1_714_545_000, pattern: "dd/MM/yyyy HH:mm") == "01/05/2024 06:30")
    #expect(CSVFormat.date(-1, pattern: "yyyy-MM-dd HH:mm:ss") == "1969-12-31 23:59:59")
    #expect(CSVFormat.date(1_714_545_000.25, pattern: "HH:mm:ss.SSS") == "06:30:00.250")
}

@Test func parseDateReadsAPatternInUTCUnlessItHasAZone() {
    #expect(CSVFormat.parseDate("01/05/2024 06:30", pattern: "dd/MM/yyyy HH:mm") == 1_714_545_000)
    #expect(CSVFormat.parseDate("2024-05-01", pattern: "yyyy-MM-dd") == 1_714_521_600)
    #expect(CSVFormat.parseDate("2024-05-01 08:30 +0200", pattern: "yyyy-MM-dd HH:mm Z") == 1_714_545_000)
    #expect(CSVFormat.parseDate("2024-05-01", pattern: "dd/MM/yyyy HH:mm") == nil)
    #expect(CSVFormat.parseDate("31/02/2024 06:30", pattern: "dd/MM/yyyy HH:mm") == nil)
    #expect(CSVFormat.parseDate("nonsense", pattern: "yyyy-MM-dd") == nil)
}
