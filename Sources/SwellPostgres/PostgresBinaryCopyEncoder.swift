import SwellStoreCore

/// Writes rows in the format `COPY … FROM STDIN (FORMAT binary)` reads, straight into an
/// entity's table columns: `_pk`, then each stored attribute in its column's binary form
/// (`bigint`, `double precision`, `boolean`, `timestamptz`, `json`, `text`). The server
/// parses nothing, and each value is the one the text path's casts would have made:
/// a date becomes `to_timestamp(seconds)`'s microseconds, rounded as PostgreSQL rounds.
///
/// A value the binary form cannot carry as the text path would (a date out of range or
/// not finite, a value whose kind does not fit its column, a NUL in a text) makes `append`
/// return false: the caller sends the rows the other way, which gives the same result or
/// the same error.
struct PostgresBinaryCopyEncoder {
    /// The column types, in order after `_pk`.
    let types: [AttributeType]
    private(set) var data: [UInt8] = []
    private(set) var rows = 0

    init(types: [AttributeType], capacity: Int) {
        self.types = types
        data.reserveCapacity(19 + capacity)
        data += Array("PGCOPY\n".utf8) + [0xFF, 0x0D, 0x0A, 0x00]
        append(Int32(0))    // flags
        append(Int32(0))    // header extension length
    }

    /// Seconds between the Unix epoch and PostgreSQL's (2000-01-01).
    private static let postgresEpoch = 946_684_800.0
    /// Dates within ±100,000 years of 1970: inside timestamptz's range, whatever the rounding.
    private static let dateLimit = 3.15e12

    /// Appends a row: `values` at `indices`, typed by `types`; false, appending nothing,
    /// when one cannot go in binary.
    mutating func append(primaryKey: Int64, values: [StoreValue], at indices: [Int]) -> Bool {
        let mark = data.count
        append(Int16(types.count + 1))
        append(Int32(8))
        append(primaryKey)
        for (type, index) in zip(types, indices) {
            guard appendField(values[index], type) else {
                data.removeSubrange(mark...)
                return false
            }
        }
        rows += 1
        return true
    }

    /// Appends row `row` of a batch's columns (one per type of `types`, in order) with
    /// `primaryKey`; false, appending nothing, when a value cannot go in binary.
    mutating func append(primaryKey: Int64, row: Int, columns: [ColumnPointers]) -> Bool {
        let mark = data.count
        append(Int16(types.count + 1))
        append(Int32(8))
        append(primaryKey)
        for (type, column) in zip(types, columns) {
            guard appendField(column, row: row, type) else {
                data.removeSubrange(mark...)
                return false
            }
        }
        rows += 1
        return true
    }

    private mutating func appendField(_ column: ColumnPointers, row: Int, _ type: AttributeType) -> Bool {
        if column.isNull(row) {
            append(Int32(-1))
            return true
        }
        switch (column.kind, type) {
        case (.integers, .integer):
            append(Int32(8)); append(column.integers[row])
        case (.doubles, .double):
            append(Int32(8)); append(column.doubles[row].bitPattern)
        case (.booleans, .boolean):
            append(Int32(1)); data.append(column.booleans[row] ? 1 : 0)
        case (.dates, .date):
            return appendDate(column.doubles[row])
        case (.text, .string), (.text, .json):
            let text = column.text(row)
            guard text.count <= Int32.max, !text.contains(0) else { return false }
            append(Int32(text.count))
            data.append(contentsOf: text)
        default:
            return false
        }
        return true
    }

    /// The data with its end marker.
    mutating func finish() -> [UInt8] {
        append(Int16(-1))
        return data
    }

    private mutating func appendField(_ value: StoreValue, _ type: AttributeType) -> Bool {
        switch (value, type) {
        case (.null, _):
            append(Int32(-1))
        case (.integer(let int), .integer):
            append(Int32(8)); append(int)
        case (.integer(let int), .double):
            append(Int32(8)); append(Double(int).bitPattern)
        case (.real(let double), .double):
            append(Int32(8)); append(double.bitPattern)
        case (.integer(let int), .boolean):
            append(Int32(1)); data.append(int != 0 ? 1 : 0)
        case (.integer(let int), .date):
            return appendDate(Double(int))
        case (.real(let double), .date):
            return appendDate(double)
        case (.text(let text), .string), (.text(let text), .json):
            let utf8 = text.utf8
            guard utf8.count <= Int32.max, !utf8.contains(0) else { return false }
            append(Int32(utf8.count))
            data.append(contentsOf: utf8)
        case (.integer(let int), .string):
            let text = String(int)
            append(Int32(text.utf8.count)); data.append(contentsOf: text.utf8)
        case (.real(let double), .string):
            let text = "\(double)"
            append(Int32(text.utf8.count)); data.append(contentsOf: text.utf8)
        default:
            return false
        }
        return true
    }

    /// `to_timestamp(seconds)`: microseconds since 2000-01-01, `rint` as PostgreSQL rounds.
    private mutating func appendDate(_ seconds: Double) -> Bool {
        guard seconds.isFinite, abs(seconds) < Self.dateLimit else { return false }
        let microseconds = ((seconds - Self.postgresEpoch) * 1_000_000).rounded(.toNearestOrEven)
        append(Int32(8))
        append(Int64(microseconds))
        return true
    }

    private mutating func append<T: FixedWidthInteger>(_ value: T) {
        withUnsafeBytes(of: value.bigEndian) { data.append(contentsOf: $0) }
    }
}
