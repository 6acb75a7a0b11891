import CSQLite

/// One row of a streamed read, its values read in place from the store, without
/// building `StoreValue`s or `String`s: valid only inside the callback that gets it.
///
/// Values are addressed by attribute index, as in `StoreValue` rows. For the
/// exports, which format millions of rows straight from SQLite's column bytes.
package struct StoreRowCursor {
    /// What kind of value an attribute holds in this row.
    package enum Kind {
        case null, integer, real, text
    }

    /// A value read in place from a buffer another store owns (valid only inside the callback).
    package enum Field {
        case null
        case integer(Int64)
        case real(Double)
        case text(UnsafeBufferPointer<UInt8>)
    }

    private enum Source {
        /// A SQLite statement on a row: attribute `i` is column `i + 1` (column 0 is `_pk`).
        case statement(OpaquePointer)
        /// A row composed in memory (unsaved changes over the store).
        case values([StoreValue])
        /// A row decoded in place from another store's bytes (PostgreSQL's COPY stream).
        case fields(UnsafeBufferPointer<Field>)
    }

    private let source: Source
    /// The row's primary key (its object ID's).
    package let primaryKey: Int64

    init(statement: OpaquePointer) {
        self.source = .statement(statement)
        self.primaryKey = sqlite3_column_int64(statement, 0)
    }

    package init(primaryKey: Int64, values: [StoreValue]) {
        self.source = .values(values)
        self.primaryKey = primaryKey
    }

    /// A row whose attribute `i` is `fields[i]`, valid while `fields` is.
    package init(primaryKey: Int64, fields: UnsafeBufferPointer<Field>) {
        self.source = .fields(fields)
        self.primaryKey = primaryKey
    }

    /// The kind of the attribute's value.
    package func kind(_ attribute: Int) -> Kind {
        switch source {
        case .statement(let statement):
            switch sqlite3_column_type(statement, Int32(attribute + 1)) {
            case SQLITE_INTEGER: return .integer
            case SQLITE_FLOAT: return .real
            case SQLITE_NULL: return .null
            default: return .text
            }
        case .values(let values):
            switch values[attribute] {
            case .null: return .null
            case .integer: return .integer
            case .real: return .real
            case .text: return .text
            }
        case .fields(let fields):
            switch fields[attribute] {
            case .null: return .null
            case .integer: return .integer
            case .real: return .real
            case .text: return .text
            }
        }
    }

    /// The attribute's value as an integer (its kind is `.integer`).
    package func integer(_ attribute: Int) -> Int64 {
        switch source {
        case .statement(let statement): return sqlite3_column_int64(statement, Int32(attribute + 1))
        case .values(let values):
            if case .integer(let int) = values[attribute] { return int }
            return 0
        case .fields(let fields):
            if case .integer(let int) = fields[attribute] { return int }
            return 0
        }
    }

    /// The attribute's value as a double (its kind is `.real`).
    package func real(_ attribute: Int) -> Double {
        switch source {
        case .statement(let statement): return sqlite3_column_double(statement, Int32(attribute + 1))
        case .values(let values):
            if case .real(let double) = values[attribute] { return double }
            return 0
        case .fields(let fields):
            if case .real(let double) = fields[attribute] { return double }
            return 0
        }
    }

    /// Calls `body` with the attribute's text as UTF-8 bytes (its kind is `.text`), valid only inside `body`.
    package func withText<R>(_ attribute: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        switch source {
        case .statement(let statement):
            let column = Int32(attribute + 1)
            let text = sqlite3_column_text(statement, column)
            let count = Int(sqlite3_column_bytes(statement, column))
            return try body(UnsafeBufferPointer(start: text, count: text == nil ? 0 : count))
        case .values(let values):
            guard case .text(var string) = values[attribute] else { return try body(UnsafeBufferPointer(start: nil, count: 0)) }
            return try string.withUTF8(body)
        case .fields(let fields):
            guard case .text(let bytes) = fields[attribute] else { return try body(UnsafeBufferPointer(start: nil, count: 0)) }
            return try body(bytes)
        }
    }

    /// The attribute's value (allocates for text: for rare paths).
    package func value(_ attribute: Int) -> StoreValue {
        switch source {
        case .statement, .fields:
            switch kind(attribute) {
            case .null: return .null
            case .integer: return .integer(integer(attribute))
            case .real: return .real(real(attribute))
            case .text: return .text(withText(attribute) { String(decoding: $0, as: UTF8.self) })
            }
        case .values(let values):
            return values[attribute]
        }
    }
}
