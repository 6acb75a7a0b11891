import Foundation
import SwellContexts

/// The records a flat source's worker has mapped and not yet written, as columns: one
/// typed buffer per attribute of the entity (`BatchColumns`), which becomes one batch
/// insert (Store guarantees 37).
struct ColumnBatch {
    private let entity: EntityDescription
    /// Rows a batch is expected to hold (its buffers are reserved for them).
    private let expectedRows: Int
    /// Text bytes per value the last batch held (the next one reserves as much).
    private var textBytes = 16
    private var columns = BatchColumns()
    private var handles: [Handle] = []
    /// Records appended since the last `take()`.
    private(set) var count = 0

    private enum Handle {
        case integer(BatchColumns.IntegerColumn)
        case double(BatchColumns.DoubleColumn)
        case boolean(BatchColumns.BooleanColumn)
        case date(BatchColumns.DateColumn)
        case text(BatchColumns.TextColumn)
    }

    init(entity: EntityDescription, expectedRows: Int = 0) {
        self.entity = entity
        self.expectedRows = expectedRows
        reset()
    }

    private mutating func reset() {
        columns = BatchColumns()
        handles = entity.attributes.map { attribute in
            switch attribute.type {
            case .integer: .integer(columns.integers(attribute.name))
            case .double: .double(columns.doubles(attribute.name))
            case .boolean: .boolean(columns.booleans(attribute.name))
            case .date: .date(columns.dates(attribute.name))
            case .string, .json: .text(columns.strings(attribute.name))
            }
        }
        count = 0
        if expectedRows > 0 { columns.reserveCapacity(rows: expectedRows, textBytes: textBytes) }
    }

    /// Appends a mapped record (a value per attribute, as `RecordMapper.map` gives them).
    mutating func append(_ values: [StoreValue]) {
        for (handle, value) in zip(handles, values) {
            switch (handle, value) {
            case (.integer(let column), .integer(let int)): columns.append(int, to: column)
            case (.integer(let column), _): columns.append(nil as Int64?, to: column)
            case (.double(let column), .real(let double)): columns.append(double, to: column)
            case (.double(let column), .integer(let int)): columns.append(Double(int), to: column)
            case (.double(let column), _): columns.append(nil as Double?, to: column)
            case (.boolean(let column), .integer(let int)): columns.append(int != 0, to: column)
            case (.boolean(let column), _): columns.append(nil as Bool?, to: column)
            case (.date(let column), .real(let seconds)): columns.append(secondsSince1970: seconds, to: column)
            case (.date(let column), .integer(let seconds)): columns.append(secondsSince1970: Double(seconds), to: column)
            case (.date(let column), _): columns.append(secondsSince1970: nil, to: column)
            case (.text(let column), .text(let text)): columns.append(text, to: column)
            case (.text(let column), _): columns.append(nil as String?, to: column)
            }
        }
        count += 1
    }

    /// A value of the row being built, as the batch takes it: dates as Unix seconds,
    /// text as UTF-8 bytes (copied into the column; valid only during the call).
    enum Value {
        case null
        case integer(Int64)
        case double(Double)
        case boolean(Bool)
        case text(UnsafeRawBufferPointer)

        /// The value as the store keeps it (text copied out of the page's bytes).
        var storeValue: StoreValue {
            switch self {
            case .null: .null
            case .integer(let int): .integer(int)
            case .double(let double): .real(double)
            case .boolean(let flag): .integer(flag ? 1 : 0)
            case .text(let bytes): .text(String(decoding: bytes, as: UTF8.self))
            }
        }
    }

    /// Appends attribute `attribute`'s value to the row being built in place, after the
    /// `count` complete rows: once per attribute, then `endRow()`, or `abandonRow()` to drop
    /// what was appended (a record found bad half-way leaves no partial row). A value of
    /// another kind than the attribute's column is appended as null.
    mutating func append(_ value: Value, at attribute: Int) {
        switch (handles[attribute], value) {
        case (.integer(let column), .integer(let int)): columns.append(int, to: column)
        case (.integer(let column), _): columns.append(nil as Int64?, to: column)
        case (.double(let column), .double(let double)): columns.append(double, to: column)
        case (.double(let column), _): columns.append(nil as Double?, to: column)
        case (.boolean(let column), .boolean(let flag)): columns.append(flag, to: column)
        case (.boolean(let column), _): columns.append(nil as Bool?, to: column)
        case (.date(let column), .double(let seconds)): columns.append(secondsSince1970: seconds, to: column)
        case (.date(let column), _): columns.append(secondsSince1970: nil, to: column)
        case (.text(let column), .text(let bytes)): columns.append(utf8: bytes.assumingMemoryBound(to: UInt8.self), to: column)
        case (.text(let column), _): columns.append(utf8: nil, to: column)
        }
    }

    /// Completes the row built by `append(_:at:)` (every attribute appended once).
    mutating func endRow() {
        count += 1
    }

    /// Drops the values appended for the row being built.
    mutating func abandonRow() {
        columns.truncate(toRows: count)
    }

    /// Attribute `attribute`'s value in complete row `row`, as the store keeps it (for keys and cursors).
    func value(row: Int, attribute: Int) -> StoreValue {
        columns.value(row: row, column: attribute)
    }

    /// The columns appended so far, leaving the batch empty.
    mutating func take() -> BatchColumns {
        let taken = columns
        if count > 0 { textBytes = max(16, columns.textBytesPerValue) }
        reset()
        return taken
    }
}
