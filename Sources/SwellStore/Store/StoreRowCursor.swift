import CSQLite

/// One row of a streamed read, its values read in place from the store, without
/// building `StoreValue`s or `String`s: valid only inside the callback that gets it.
///
/// Values are addressed by attribute index, as in `StoreValue` rows. For the
/// exports, which format millions of rows straight from SQLite's column bytes.
package struct StoreRowCursor {
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
    /// The primary key of a row not read from a statement.
    private let givenPrimaryKey: Int64

    /// The row's primary key (its object ID's), read from the statement only when asked
    /// (an export of the store's rows never asks).
    package var primaryKey: Int64 {
        if case .statement(let statement) = source { return sqlite3_column_int64(statement, 0) }
        return givenPrimaryKey
    }

    init(statement: OpaquePointer) {
        self.source = .statement(statement)
        self.givenPrimaryKey = 0
    }

    package init(primaryKey: Int64, values: [StoreValue]) {
        self.source = .values(values)
        self.givenPrimaryKey = primaryKey
    }

    /// A row whose attribute `i` is `fields[i]`, valid while `fields` is.
    package init(primaryKey: Int64, fields: UnsafeBufferPointer<Field>) {
        self.source = .fields(fields)
        self.givenPrimaryKey = primaryKey
    }

    /// Calls `body` with the attribute's value read in place (text valid only during the call):
    /// for SQLite one column call, where `kind` and then `integer` or `withText` make two or three.
    package func withField<R>(_ attribute: Int, _ body: (Field) throws -> R) rethrows -> R {
        switch source {
        case .statement(let statement):
            guard let value = sqlite3_column_value(statement, Int32(attribute + 1)) else { return try body(.null) }
            switch sqlite3_value_type(value) {
            case SQLITE_INTEGER: return try body(.integer(sqlite3_value_int64(value)))
            case SQLITE_FLOAT: return try body(.real(sqlite3_value_double(value)))
            case SQLITE_NULL: return try body(.null)
            default:
                let text = sqlite3_value_text(value)
                return try body(.text(UnsafeBufferPointer(start: text, count: text == nil ? 0 : Int(sqlite3_value_bytes(value)))))
            }
        case .values(let values):
            switch values[attribute] {
            case .null: return try body(.null)
            case .integer(let int): return try body(.integer(int))
            case .real(let double): return try body(.real(double))
            case .text(var string): return try string.withUTF8 { try body(.text($0)) }
            }
        case .fields(let fields):
            return try body(fields[attribute])
        }
    }

    /// The attribute's value (allocates for text: for rare paths).
    package func value(_ attribute: Int) -> StoreValue {
        if case .values(let values) = source { return values[attribute] }
        return withField(attribute) { field in
            switch field {
            case .null: .null
            case .integer(let int): .integer(int)
            case .real(let double): .real(double)
            case .text(let bytes): .text(String(decoding: bytes, as: UTF8.self))
            }
        }
    }
}
