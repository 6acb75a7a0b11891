/// One row of a streamed read, its values read in place from the store, without
/// building `StoreValue`s or `String`s: valid only inside the callback that gets it.
///
/// Values are addressed by attribute index, as in `StoreValue` rows. For the
/// exports, which format millions of rows straight from SQLite's column bytes.
public struct StoreRowCursor {
    /// A value read in place from a buffer another store owns (valid only inside the callback).
    public enum Field {
        case null
        case integer(Int64)
        case real(Double)
        case text(UnsafeBufferPointer<UInt8>)
    }

    private enum Source {
        /// A row a store reads in place (a SQLite statement on a row).
        case store(any StoreRowSource)
        /// A row composed in memory (unsaved changes over the store).
        case values([StoreValue])
        /// A row decoded in place from another store's bytes (PostgreSQL's COPY stream).
        case fields(UnsafeBufferPointer<Field>)
    }

    private let source: Source
    /// The primary key of a row not read from a statement.
    private let givenPrimaryKey: Int64

    /// The row's primary key (its object ID's), read from the store's row only when asked
    /// (an export of the store's rows never asks).
    public var primaryKey: Int64 {
        if case .store(let row) = source { return row.primaryKey }
        return givenPrimaryKey
    }

    /// The row `row` reads in place, valid while it is.
    public init(_ row: some StoreRowSource) {
        self.source = .store(row)
        self.givenPrimaryKey = 0
    }

    public init(primaryKey: Int64, values: [StoreValue]) {
        self.source = .values(values)
        self.givenPrimaryKey = primaryKey
    }

    /// A row whose attribute `i` is `fields[i]`, valid while `fields` is.
    public init(primaryKey: Int64, fields: UnsafeBufferPointer<Field>) {
        self.source = .fields(fields)
        self.givenPrimaryKey = primaryKey
    }

    /// Calls `body` with the attribute's value read in place (text valid only during the call).
    public func withField<R>(_ attribute: Int, _ body: (Field) throws -> R) rethrows -> R {
        switch source {
        case .store(let row):
            return try body(row.field(attribute))
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
    public func value(_ attribute: Int) -> StoreValue {
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

/// A row a store reads in place for a `StoreRowCursor`: the store's own cursor on the row
/// (a SQLite statement), valid only inside the callback that gets the cursor.
public protocol StoreRowSource {
    /// The row's primary key (its object ID's).
    var primaryKey: Int64 { get }
    /// Attribute `attribute`'s value read in place (text valid until the row moves on); one
    /// plain call per value, so the caller's formatting stays specialised and inlined.
    func field(_ attribute: Int) -> StoreRowCursor.Field
}
