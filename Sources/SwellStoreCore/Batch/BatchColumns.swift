import Foundation

/// Rows for a `BatchInsertRequest` as columns: one typed buffer per attribute, which a
/// caller appends values to, row after row (Store guarantees 37, Swell's columnar form).
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

    /// What a column holds.
    package enum Kind: Sendable {
        case integers, doubles, booleans, dates, text
    }

    /// One attribute's values: the buffer of its kind (the others stay empty) and a null bitmap.
    package struct Column: Sendable {
        package var name: String
        package var kind: Kind
        /// The column holds a relationship's column (a to-one's IDs, or a join-table
        /// to-many's member lists), named by the relationship: package use only.
        package var isRelationship = false
        package var integers: [Int64] = []
        /// Doubles, and dates as Unix seconds.
        package var doubles: [Double] = []
        package var booleans: [Bool] = []
        /// UTF-8 bytes of every text value, one after another; `ends[i]` is where value `i` ends.
        package var arena: [UInt8] = []
        package var ends: [Int] = []
        /// Bit `i` set: value `i` is null.
        package var nulls: [UInt64] = []
        package var count = 0

        package init(name: String, kind: Kind) {
            self.name = name
            self.kind = kind
        }

        package mutating func noteNull(_ isNull: Bool) {
            let word = count >> 6
            if word == nulls.count { nulls.append(0) }
            if isNull { nulls[word] |= 1 << UInt64(count & 63) }
            count += 1
        }

        // One access to the column per value (`columns[i].append…`): the batch's appends
        // check the arrays' uniqueness once, not once per buffer touched.
        package mutating func append(integer value: Int64?) {
            noteNull(value == nil)
            integers.append(value ?? 0)
        }

        package mutating func append(double value: Double?) {
            noteNull(value == nil)
            doubles.append(value ?? 0)
        }

        package mutating func append(boolean value: Bool?) {
            noteNull(value == nil)
            booleans.append(value ?? false)
        }

        package mutating func append(utf8 bytes: UnsafeBufferPointer<UInt8>?) {
            noteNull(bytes == nil)
            if let bytes { arena.append(contentsOf: bytes) }
            ends.append(arena.count)
        }

        package func isNull(_ row: Int) -> Bool {
            nulls[row >> 6] & (1 << UInt64(row & 63)) != 0
        }

        /// Keeps the first `rows` values only.
        package mutating func truncate(toRows rows: Int) {
            guard count > rows else { return }
            switch kind {
            case .integers: integers.removeLast(count - rows)
            case .doubles, .dates: doubles.removeLast(count - rows)
            case .booleans: booleans.removeLast(count - rows)
            case .text:
                arena.removeLast(arena.count - (rows == 0 ? 0 : ends[rows - 1]))
                ends.removeLast(count - rows)
            }
            let words = (rows + 63) >> 6
            nulls.removeLast(nulls.count - words)
            if rows & 63 != 0 { nulls[words - 1] &= (1 << UInt64(rows & 63)) - 1 }
            count = rows
        }

        /// Where text value `row` starts and ends in `arena`.
        package func textRange(_ row: Int) -> Range<Int> {
            (row == 0 ? 0 : ends[row - 1])..<ends[row]
        }
    }

    package private(set) var columns: [Column] = []

    /// An empty set of columns.
    public init() {}

    /// How many rows the columns hold (the longest column's count).
    public var rowCount: Int {
        var count = 0
        for column in columns { count = max(count, column.count) }
        return count
    }

    /// The attribute names, in the order the columns were added.
    public var attributeNames: [String] { columns.map(\.name) }

    private mutating func add(_ name: String, _ kind: Kind) -> Int {
        columns.append(Column(name: name, kind: kind))
        return columns.count - 1
    }

    /// Adds a column for the integer attribute `name`.
    public mutating func integers(_ name: String, reservingCapacity capacity: Int = 0) -> IntegerColumn {
        let index = add(name, .integers)
        columns[index].integers.reserveCapacity(capacity)
        return IntegerColumn(index: index)
    }

    /// Adds a column of the IDs (primary keys) a to-one relationship points at, by the
    /// relationship's name: a batch of records with nested objects writes its links with its
    /// rows. Not Core Data's form: a request with such columns is for
    /// `BulkSession.executeLinkedInserts(_:records:children:)`, which knows the IDs.
    public mutating func references(_ relationship: String) -> IntegerColumn {
        let index = add(relationship, .integers)
        columns[index].isRelationship = true
        return IntegerColumn(index: index)
    }

    /// Adds a column of each row's position in the ordered to-many that its to-one
    /// `relationship` is the inverse of (nil: no position, the row points at nothing): for
    /// linked inserts, as `references`.
    public mutating func positions(inverseOf relationship: String) -> IntegerColumn {
        let index = add(ManagedObjectModel.orderColumn(of: relationship), .integers)
        columns[index].isRelationship = true
        return IntegerColumn(index: index)
    }

    /// Adds a column of the member lists of an unordered to-many kept in a join table, by the
    /// relationship's name: each row's value is its members' IDs (`append(members:to:)`),
    /// and the stored set becomes exactly that list. For linked inserts, as `references`.
    public mutating func memberLists(_ relationship: String) -> TextColumn {
        let index = add(relationship, .text)
        columns[index].isRelationship = true
        return TextColumn(index: index)
    }

    /// Appends a member list (IDs in any order, repeats allowed) as the join column's value:
    /// the IDs ascending, once each, joined by commas (`JoinTable.encode`); empty is null.
    public mutating func append(members: inout [Int64], to column: TextColumn) {
        guard !members.isEmpty else {
            append(utf8: nil, to: column)
            return
        }
        members.sort()
        var text = ""
        var last: Int64?
        for member in members where member != last {
            if last != nil { text += "," }
            text += String(member)
            last = member
        }
        append(text, to: column)
    }

    /// Whether column `column` holds a relationship's column.
    package func isRelationship(_ column: Int) -> Bool { columns[column].isRelationship }

    /// These columns without those at `dropped` (their buffers are shared, not copied).
    package func removingColumns(_ dropped: Set<Int>) -> BatchColumns {
        var result = BatchColumns()
        result.columns = columns.enumerated().filter { !dropped.contains($0.offset) }.map(\.element)
        return result
    }

    /// Adds a column for the double attribute `name`.
    public mutating func doubles(_ name: String) -> DoubleColumn {
        DoubleColumn(index: add(name, .doubles))
    }

    /// Adds a column for the boolean attribute `name`.
    public mutating func booleans(_ name: String) -> BooleanColumn {
        BooleanColumn(index: add(name, .booleans))
    }

    /// Adds a column for the date attribute `name`.
    public mutating func dates(_ name: String) -> DateColumn {
        DateColumn(index: add(name, .dates))
    }

    /// Adds a column for the string (or JSON) attribute `name`.
    public mutating func strings(_ name: String) -> TextColumn {
        TextColumn(index: add(name, .text))
    }

    /// Reserves room for `rows` values in every column added so far, and about
    /// `textBytes` bytes per value in text columns, so that filling a batch of
    /// known size does not grow its buffers value by value.
    public mutating func reserveCapacity(rows: Int, textBytes: Int = 16) {
        for index in columns.indices {
            columns[index].nulls.reserveCapacity(rows / 64 + 1)
            switch columns[index].kind {
            case .integers: columns[index].integers.reserveCapacity(rows)
            case .doubles, .dates: columns[index].doubles.reserveCapacity(rows)
            case .booleans: columns[index].booleans.reserveCapacity(rows)
            case .text:
                columns[index].ends.reserveCapacity(rows)
                columns[index].arena.reserveCapacity(rows * textBytes)
            }
        }
    }

    /// Appends the next value (nil: null) of an integer column.
    public mutating func append(_ value: Int64?, to column: IntegerColumn) {
        columns[column.index].append(integer: value)
    }

    /// Appends the next value (nil: null) of an integer column.
    public mutating func append(_ value: Int?, to column: IntegerColumn) {
        append(value.map(Int64.init), to: column)
    }

    /// Appends the next value (nil: null) of a double column.
    public mutating func append(_ value: Double?, to column: DoubleColumn) {
        columns[column.index].append(double: value)
    }

    /// Appends the next value (nil: null) of a boolean column.
    public mutating func append(_ value: Bool?, to column: BooleanColumn) {
        columns[column.index].append(boolean: value)
    }

    /// Appends the next value (nil: null) of a date column.
    public mutating func append(_ value: Date?, to column: DateColumn) {
        append(secondsSince1970: value?.timeIntervalSince1970, to: column)
    }

    /// Appends the next value (nil: null) of a date column as Unix seconds.
    public mutating func append(secondsSince1970 seconds: Double?, to column: DateColumn) {
        columns[column.index].append(double: seconds)
    }

    /// Appends the next value (nil: null) of a text column.
    public mutating func append(_ value: String?, to column: TextColumn) {
        guard var value else {
            append(utf8: nil, to: column)
            return
        }
        value.withUTF8 { append(utf8: $0, to: column) }
    }

    /// Appends the next value of a text column as UTF-8 bytes (copied into the column's
    /// arena; nil: null). The bytes must be valid UTF-8.
    public mutating func append(utf8 bytes: UnsafeBufferPointer<UInt8>?, to column: TextColumn) {
        columns[column.index].append(utf8: bytes)
    }

    /// The average size of the text values held (0 without any).
    public var textBytesPerValue: Int {
        var bytes = 0, values = 0
        for column in columns where column.kind == .text {
            bytes += column.arena.count
            values += column.ends.count
        }
        return values == 0 ? 0 : bytes / values
    }

    /// The attribute type a column's values fit.
    package func fits(_ column: Int, _ type: AttributeType) -> Bool {
        switch (columns[column].kind, type) {
        case (.integers, .integer), (.doubles, .double), (.booleans, .boolean), (.dates, .date), (.text, .string), (.text, .json): true
        default: false
        }
    }

    /// Drops every column's values after its first `rows` (a row begun and given up).
    public mutating func truncate(toRows rows: Int) {
        for index in columns.indices where columns[index].count > rows {
            columns[index].truncate(toRows: rows)
        }
    }

    /// The rows `rows` (in that order) of every column, copied.
    public func selecting(rows: [Int]) -> BatchColumns {
        var result = BatchColumns()
        for column in columns {
            var selected = Column(name: column.name, kind: column.kind)
            selected.isRelationship = column.isRelationship
            for row in rows {
                let null = column.isNull(row)
                switch column.kind {
                case .integers: selected.append(integer: null ? nil : column.integers[row])
                case .doubles, .dates: selected.append(double: null ? nil : column.doubles[row])
                case .booleans: selected.append(boolean: null ? nil : column.booleans[row])
                case .text:
                    if null {
                        selected.append(utf8: nil)
                    } else {
                        column.arena.withUnsafeBufferPointer { arena in
                            selected.append(utf8: UnsafeBufferPointer(rebasing: arena[column.textRange(row)]))
                        }
                    }
                }
            }
            result.columns.append(selected)
        }
        return result
    }

    /// Value `row` of column `column`, as the store keeps it.
    public func value(row: Int, column: Int) -> StoreValue {
        let column = columns[column]
        if column.isNull(row) { return .null }
        switch column.kind {
        case .integers: return .integer(column.integers[row])
        case .doubles, .dates: return .real(column.doubles[row])
        case .booleans: return .integer(column.booleans[row] ? 1 : 0)
        case .text: return .text(String(decoding: column.arena[column.textRange(row)], as: UTF8.self))
        }
    }
}

/// A column's buffers as pointers, lent by `BatchColumns.withPointers`: a store reads
/// a batch row by row through them without copying (or retaining) its arrays per value.
package struct ColumnPointers {
    package let kind: BatchColumns.Kind
    package let nulls: UnsafeBufferPointer<UInt64>
    package let integers: UnsafeBufferPointer<Int64>
    package let doubles: UnsafeBufferPointer<Double>
    package let booleans: UnsafeBufferPointer<Bool>
    package let ends: UnsafeBufferPointer<Int>
    package let arena: UnsafeBufferPointer<UInt8>

    package func isNull(_ row: Int) -> Bool {
        nulls[row >> 6] & (1 << UInt64(row & 63)) != 0
    }

    /// Text value `row`'s bytes.
    package func text(_ row: Int) -> UnsafeBufferPointer<UInt8> {
        let start = row == 0 ? 0 : ends[row - 1]
        return UnsafeBufferPointer(rebasing: arena[start..<ends[row]])
    }
}

extension BatchColumns {
    /// Runs `body` with every column's buffers as pointers, valid during the call.
    package func withPointers<R>(_ body: ([ColumnPointers]) throws -> R) rethrows -> R {
        var collected: [ColumnPointers] = []
        collected.reserveCapacity(columns.count)
        return try Self.withPointers(columns[...], collected: &collected, body)
    }

    private static func withPointers<R>(_ rest: ArraySlice<Column>, collected: inout [ColumnPointers],
                                        _ body: ([ColumnPointers]) throws -> R) rethrows -> R {
        guard let column = rest.first else { return try body(collected) }
        return try column.nulls.withUnsafeBufferPointer { nulls in
            try column.integers.withUnsafeBufferPointer { integers in
                try column.doubles.withUnsafeBufferPointer { doubles in
                    try column.booleans.withUnsafeBufferPointer { booleans in
                        try column.ends.withUnsafeBufferPointer { ends in
                            try column.arena.withUnsafeBufferPointer { arena in
                                collected.append(ColumnPointers(kind: column.kind, nulls: nulls, integers: integers, doubles: doubles,
                                                                booleans: booleans, ends: ends, arena: arena))
                                defer { collected.removeLast() }
                                return try withPointers(rest.dropFirst(), collected: &collected, body)
                            }
                        }
                    }
                }
            }
        }
    }
}

extension ColumnPointers {
    /// Whether a stored value, read in place, is the incoming value `row` of this column as
    /// `StoreValue` equality would say it (a value of another storage class is not equal; a
    /// boolean is stored as 0 or 1); a required attribute stored as nil is never equal. The
    /// one rule of a batch's in-place comparison, whatever store reads the value.
    package func equals(_ stored: StoreRowCursor.Field, row: Int, required: Bool) -> Bool {
        if isNull(row) {
            if case .null = stored { return !required }
            return false
        }
        switch (kind, stored) {
        case (.integers, .integer(let value)): return value == integers[row]
        case (.booleans, .integer(let value)): return value == (booleans[row] ? 1 : 0)
        case (.doubles, .real(let value)), (.dates, .real(let value)): return value == doubles[row]
        case (.text, .text(let bytes)):
            let text = self.text(row)
            return bytes.count == text.count && (bytes.isEmpty || memcmp(bytes.baseAddress!, text.baseAddress!, bytes.count) == 0)
        default: return false
        }
    }
}
