import Foundation
import SwellStore

/// The records a flat source's worker has mapped and not yet written, as columns: one
/// typed buffer per attribute of the entity (`BatchColumns`), which becomes one batch
/// insert (store.md 37).
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

    /// Appends a record staged value by value (`StagedRow`, one value per attribute).
    mutating func append(_ row: StagedRow) {
        row.arena.withUnsafeBufferPointer { arena in
            for (handle, value) in zip(handles, row.values) {
                switch (handle, value) {
                case (.integer(let column), .integer(let int)): columns.append(int, to: column)
                case (.integer(let column), _): columns.append(nil as Int64?, to: column)
                case (.double(let column), .double(let double)): columns.append(double, to: column)
                case (.double(let column), _): columns.append(nil as Double?, to: column)
                case (.boolean(let column), .integer(let int)): columns.append(int != 0, to: column)
                case (.boolean(let column), _): columns.append(nil as Bool?, to: column)
                case (.date(let column), .double(let seconds)): columns.append(secondsSince1970: seconds, to: column)
                case (.date(let column), _): columns.append(secondsSince1970: nil, to: column)
                case (.text(let column), .text(let range)): columns.append(utf8: UnsafeBufferPointer(rebasing: arena[range]), to: column)
                case (.text(let column), _): columns.append(utf8: nil, to: column)
                }
            }
        }
        count += 1
    }

    /// The columns appended so far, leaving the batch empty.
    mutating func take() -> BatchColumns {
        let taken = columns
        if count > 0 { textBytes = max(16, columns.textBytesPerValue) }
        reset()
        return taken
    }
}

/// One record's values on their way into a `ColumnBatch`, staged until the record is
/// complete (a record found bad half-way leaves no partial row). Reused record after
/// record: its buffers allocate nothing once grown.
struct StagedRow {
    /// A value as the batch takes it: booleans as 0/1 integers, dates as Unix seconds.
    enum Value {
        case null
        case integer(Int64)
        case double(Double)
        /// Bytes of `arena`.
        case text(Range<Int>)
    }

    var values: [Value]
    /// The text values' UTF-8 bytes.
    var arena: [UInt8] = []

    init(attributes: Int) {
        values = Array(repeating: .null, count: attributes)
        arena.reserveCapacity(256)
    }

    /// Empties the row for the next record.
    mutating func clear() {
        for index in values.indices { values[index] = .null }
        arena.removeAll(keepingCapacity: true)
    }

    /// Stages text bytes as attribute `index`'s value.
    mutating func setText(_ index: Int, _ bytes: UnsafeRawBufferPointer) {
        let start = arena.count
        arena.append(contentsOf: bytes)
        values[index] = .text(start..<arena.count)
    }

    /// Attribute `index`'s value as the store keeps it (for keys and cursors).
    func storeValue(_ index: Int) -> StoreValue {
        switch values[index] {
        case .null: .null
        case .integer(let int): .integer(int)
        case .double(let double): .real(double)
        case .text(let range): .text(String(decoding: arena[range], as: UTF8.self))
        }
    }
}
