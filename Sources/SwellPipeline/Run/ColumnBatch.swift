import Foundation
import SwellStore

/// The records a flat source's worker has mapped and not yet written, as columns: one
/// typed buffer per attribute of the entity (`BatchColumns`), which becomes one batch
/// insert (store.md 37).
struct ColumnBatch {
    private let entity: EntityDescription
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

    init(entity: EntityDescription) {
        self.entity = entity
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

    /// The columns appended so far, leaving the batch empty.
    mutating func take() -> BatchColumns {
        let taken = columns
        reset()
        return taken
    }
}
