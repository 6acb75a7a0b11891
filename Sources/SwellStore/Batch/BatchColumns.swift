import Foundation

/// Rows for a `BatchInsertRequest` as columns: one typed buffer per attribute, which a
/// caller appends values to, row after row (store.md 37, Swell's columnar form).
///
/// Integers, doubles, dates and booleans are kept in contiguous arrays with a null bitmap;
/// strings and JSON text as UTF-8 bytes in one arena with end offsets. A column is added
/// once, by attribute name, and returns a typed handle, so a value of the wrong Swift type
/// does not compile:
///
/// ```swift
/// var columns = BatchColumns()
/// let id = columns.integers("id"), title = columns.strings("title")
/// for record in records {
///     columns.append(record.id, to: id)
///     columns.append(record.title, to: title)   // nil appends a null
/// }
/// let request = BatchInsertRequest(entityName: "Item", columns: columns)
/// ```
///
/// Every column must hold the same number of values when the request runs; an attribute
/// without a column is not carried (an upsert keeps its stored value, a new row has nil).
public struct BatchColumns: Sendable {
    /// A column of `.integer` values.
    public struct IntegerColumn: Sendable, Hashable { let index: Int }
    /// A column of `.double` values.
    public struct DoubleColumn: Sendable, Hashable { let index: Int }
    /// A column of `.boolean` values.
    public struct BooleanColumn: Sendable, Hashable { let index: Int }
    /// A column of `.date` values.
    public struct DateColumn: Sendable, Hashable { let index: Int }
    /// A column of `.string` or `.json` values (UTF-8 text).
    public struct TextColumn: Sendable, Hashable { let index: Int }

    enum Values: Sendable {
        case integers([Int64])
        case doubles([Double])
        case booleans([Bool])
        /// Unix seconds.
        case dates([Double])
        /// UTF-8 bytes of every value, one after another; `ends[i]` is where value `i` ends.
        case text(arena: [UInt8], ends: [Int])
    }

    struct Column: Sendable {
        var name: String
        var values: Values
        /// Bit `i` set: value `i` is null.
        var nulls: [UInt64] = []
        var count = 0

        mutating func noteNull(_ isNull: Bool) {
            let word = count >> 6
            if word == nulls.count { nulls.append(0) }
            if isNull { nulls[word] |= 1 << UInt64(count & 63) }
            count += 1
        }

        func isNull(_ row: Int) -> Bool {
            nulls[row >> 6] & (1 << UInt64(row & 63)) != 0
        }
    }

    private(set) var columns: [Column] = []

    /// An empty set of columns.
    public init() {}

    /// How many rows the columns hold (the longest column's count).
    public var rowCount: Int { columns.map(\.count).max() ?? 0 }

    /// The attribute names, in the order the columns were added.
    public var attributeNames: [String] { columns.map(\.name) }

    private mutating func add(_ name: String, _ values: Values) -> Int {
        columns.append(Column(name: name, values: values))
        return columns.count - 1
    }

    /// Adds a column for the integer attribute `name`.
    public mutating func integers(_ name: String, reservingCapacity capacity: Int = 0) -> IntegerColumn {
        var storage: [Int64] = []
        storage.reserveCapacity(capacity)
        return IntegerColumn(index: add(name, .integers(storage)))
    }

    /// Adds a column for the double attribute `name`.
    public mutating func doubles(_ name: String) -> DoubleColumn {
        DoubleColumn(index: add(name, .doubles([])))
    }

    /// Adds a column for the boolean attribute `name`.
    public mutating func booleans(_ name: String) -> BooleanColumn {
        BooleanColumn(index: add(name, .booleans([])))
    }

    /// Adds a column for the date attribute `name`.
    public mutating func dates(_ name: String) -> DateColumn {
        DateColumn(index: add(name, .dates([])))
    }

    /// Adds a column for the string (or JSON) attribute `name`.
    public mutating func strings(_ name: String) -> TextColumn {
        TextColumn(index: add(name, .text(arena: [], ends: [])))
    }

    /// Appends the next value (nil: null) of an integer column.
    public mutating func append(_ value: Int64?, to column: IntegerColumn) {
        columns[column.index].noteNull(value == nil)
        if case .integers(var values) = columns[column.index].values {
            columns[column.index].values = .integers([])
            values.append(value ?? 0)
            columns[column.index].values = .integers(values)
        }
    }

    /// Appends the next value (nil: null) of an integer column.
    public mutating func append(_ value: Int?, to column: IntegerColumn) {
        append(value.map(Int64.init), to: column)
    }

    /// Appends the next value (nil: null) of a double column.
    public mutating func append(_ value: Double?, to column: DoubleColumn) {
        columns[column.index].noteNull(value == nil)
        if case .doubles(var values) = columns[column.index].values {
            columns[column.index].values = .doubles([])
            values.append(value ?? 0)
            columns[column.index].values = .doubles(values)
        }
    }

    /// Appends the next value (nil: null) of a boolean column.
    public mutating func append(_ value: Bool?, to column: BooleanColumn) {
        columns[column.index].noteNull(value == nil)
        if case .booleans(var values) = columns[column.index].values {
            columns[column.index].values = .booleans([])
            values.append(value ?? false)
            columns[column.index].values = .booleans(values)
        }
    }

    /// Appends the next value (nil: null) of a date column.
    public mutating func append(_ value: Date?, to column: DateColumn) {
        columns[column.index].noteNull(value == nil)
        if case .dates(var values) = columns[column.index].values {
            columns[column.index].values = .dates([])
            values.append(value?.timeIntervalSince1970 ?? 0)
            columns[column.index].values = .dates(values)
        }
    }

    /// Appends the next value (nil: null) of a text column.
    public mutating func append(_ value: String?, to column: TextColumn) {
        guard var value else {
            appendText(nil, to: column)
            return
        }
        value.withUTF8 { appendText($0, to: column) }
    }

    /// Appends the next value of a text column as UTF-8 bytes (copied into the column's
    /// arena; nil: null). The bytes must be valid UTF-8.
    public mutating func append(utf8 bytes: UnsafeBufferPointer<UInt8>?, to column: TextColumn) {
        appendText(bytes, to: column)
    }

    private mutating func appendText(_ bytes: UnsafeBufferPointer<UInt8>?, to column: TextColumn) {
        columns[column.index].noteNull(bytes == nil)
        if case .text(var arena, var ends) = columns[column.index].values {
            columns[column.index].values = .text(arena: [], ends: [])
            if let bytes { arena.append(contentsOf: bytes) }
            ends.append(arena.count)
            columns[column.index].values = .text(arena: arena, ends: ends)
        }
    }

    /// The attribute type a column's values fit.
    func fits(_ column: Int, _ type: AttributeType) -> Bool {
        switch (columns[column].values, type) {
        case (.integers, .integer), (.doubles, .double), (.booleans, .boolean), (.dates, .date), (.text, .string), (.text, .json): true
        default: false
        }
    }

    /// Value `row` of column `column`, as the store keeps it.
    func value(row: Int, column: Int) -> StoreValue {
        let column = columns[column]
        if column.isNull(row) { return .null }
        switch column.values {
        case .integers(let values): return .integer(values[row])
        case .doubles(let values): return .real(values[row])
        case .booleans(let values): return .integer(values[row] ? 1 : 0)
        case .dates(let values): return .real(values[row])
        case .text(let arena, let ends):
            let start = row == 0 ? 0 : ends[row - 1]
            return .text(String(decoding: arena[start..<ends[row]], as: UTF8.self))
        }
    }
}
