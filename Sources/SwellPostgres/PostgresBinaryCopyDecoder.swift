import SwellStoreCore

/// Decodes the stream of `COPY … TO STDOUT (FORMAT binary)` into rows of values read in
/// place (`StoreRowCursor.Field`: texts point into the stream's bytes), however the server
/// cut the stream into messages.
///
/// The format (PostgreSQL's "COPY", binary format): an 11-byte signature, a flags word and a
/// header extension; then per row a 16-bit field count and per field a 32-bit length (-1:
/// NULL) and the value's binary send form; a count of -1 ends the data. Integers and floats
/// are big-endian; text and json are their UTF-8 bytes.
struct PostgresBinaryCopyDecoder {
    /// How a column's binary value reads.
    enum ColumnKind: Equatable {
        case int2, int4, int8, float4, float8, bool, timestamp, text
    }

    /// The kind of a column of type `oid`, or nil for a type this decoder does not read.
    static func kind(ofType oid: UInt32) -> ColumnKind? {
        switch oid {
        case 20: .int8
        case 21: .int2
        case 23: .int4
        case 700: .float4
        case 701: .float8
        case 16: .bool
        case 1184: .timestamp                  // timestamptz
        case 25, 114, 1043, 19: .text          // text, json, varchar, name
        default: nil
        }
    }

    private static let signature: [UInt8] = Array("PGCOPY\n".utf8) + [0xFF, 0x0D, 0x0A, 0x00]

    let kinds: [ColumnKind]
    private var pending: [UInt8] = []
    private var headerRead = false
    private(set) var ended = false
    private var fields: [StoreRowCursor.Field] = []

    init(kinds: [ColumnKind]) {
        self.kinds = kinds
        fields.reserveCapacity(kinds.count)
    }

    /// Decodes what `chunk` completes, calling `row` with each whole row's fields (valid only inside `row`).
    mutating func feed(_ chunk: UnsafeRawBufferPointer, _ row: (UnsafeBufferPointer<StoreRowCursor.Field>) throws -> Void) throws {
        if pending.isEmpty {
            let used = try decode(chunk, row)
            if used < chunk.count { pending.append(contentsOf: chunk[used...]) }
            return
        }
        pending.append(contentsOf: chunk)
        var buffer = pending
        pending = []
        let used = try buffer.withUnsafeBytes { try decode($0, row) }
        buffer.removeFirst(used)
        pending = buffer
    }

    /// Checks the stream ended where it should: the end marker read, nothing after it.
    func finish() throws(PostgresError) {
        guard ended, pending.isEmpty else { throw Self.malformed("the data ended before its end marker") }
    }

    /// Decodes whole rows from the start of `bytes`; returns how many bytes they took.
    private mutating func decode(_ bytes: UnsafeRawBufferPointer, _ row: (UnsafeBufferPointer<StoreRowCursor.Field>) throws -> Void) throws -> Int {
        var offset = 0
        if !headerRead {
            guard bytes.count >= 19 else { return 0 }
            guard bytes.prefix(11).elementsEqual(Self.signature) else { throw Self.malformed("no binary COPY signature") }
            let extensionLength = Int(Self.int32(bytes, 15))
            guard bytes.count >= 19 + extensionLength else { return 0 }
            offset = 19 + extensionLength
            headerRead = true
        }
        while offset + 2 <= bytes.count {
            guard !ended else { throw Self.malformed("data after the end marker") }
            let count = Int(Int16(bitPattern: UInt16(bigEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt16.self))))
            if count == -1 {
                ended = true
                offset += 2
                continue
            }
            guard count == kinds.count else { throw Self.malformed("a row of \(count) fields, expected \(kinds.count)") }
            // A whole row first: its fields' lengths.
            var end = offset + 2
            for _ in 0..<count {
                guard end + 4 <= bytes.count else { return offset }
                let length = Int(Self.int32(bytes, end))
                end += 4 + max(length, 0)
                guard end <= bytes.count else { return offset }
            }
            fields.removeAll(keepingCapacity: true)
            var position = offset + 2
            for kind in kinds {
                let length = Int(Self.int32(bytes, position))
                position += 4
                guard length >= 0 else {
                    fields.append(.null)
                    continue
                }
                fields.append(try Self.field(kind, bytes, at: position, length: length))
                position += length
            }
            try fields.withUnsafeBufferPointer { try row($0) }
            offset = end
        }
        return offset
    }

    /// A value in its binary send form (`length` bytes at `offset`), read in place.
    static func field(_ kind: ColumnKind, _ bytes: UnsafeRawBufferPointer, at offset: Int, length: Int) throws(PostgresError) -> StoreRowCursor.Field {
        func need(_ size: Int) throws(PostgresError) {
            guard length == size else { throw malformed("a \(kind) value of \(length) bytes") }
        }
        switch kind {
        case .int8:
            try need(8)
            return .integer(Int64(bigEndian: bytes.loadUnaligned(fromByteOffset: offset, as: Int64.self)))
        case .int4:
            try need(4)
            return .integer(Int64(int32(bytes, offset)))
        case .int2:
            try need(2)
            return .integer(Int64(Int16(bigEndian: bytes.loadUnaligned(fromByteOffset: offset, as: Int16.self))))
        case .float8:
            try need(8)
            return .real(Double(bitPattern: UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))))
        case .float4:
            try need(4)
            return .real(Double(Float(bitPattern: UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))))
        case .bool:
            try need(1)
            return .integer(bytes[offset] == 0 ? 0 : 1)
        case .timestamp:
            try need(8)
            return .real(seconds(fromMicroseconds: Int64(bigEndian: bytes.loadUnaligned(fromByteOffset: offset, as: Int64.self))))
        case .text:
            let start = bytes.baseAddress.map { $0.advanced(by: offset).assumingMemoryBound(to: UInt8.self) }
            return .text(UnsafeBufferPointer(start: start, count: length))
        }
    }

    /// A `timestamptz` (microseconds since 2000-01-01) as Unix seconds: the very double
    /// `extract(epoch from …)::float8` gives — the exact decimal quotient, correctly rounded,
    /// which one IEEE division of two exact values also is. ±infinity for PostgreSQL's infinities.
    static func seconds(fromMicroseconds microseconds: Int64) -> Double {
        if microseconds == .max { return .infinity }
        if microseconds == .min { return -.infinity }
        // PostgreSQL's timestamps (4713 BC to 294276 AD) never overflow here.
        let unix = microseconds &+ 946_684_800_000_000
        if unix.magnitude < 1 << 53 { return Double(unix) / 1_000_000 }
        // Before 1685 or after 2255 the integer is not exact as a double: round the decimal
        // text, as PostgreSQL's numeric-to-float8 does.
        let fraction = String(unix.magnitude % 1_000_000)
        let text = (unix < 0 ? "-" : "") + "\(unix.magnitude / 1_000_000)." + String(repeating: "0", count: 6 - fraction.count) + fraction
        return Double(text) ?? Double(unix) / 1_000_000
    }

    private static func int32(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> Int32 {
        Int32(bigEndian: bytes.loadUnaligned(fromByteOffset: offset, as: Int32.self))
    }

    private static func malformed(_ what: String) -> PostgresError {
        .unreadableAnswer(message: "the server's binary COPY data could not be read: \(what)", sql: "COPY … TO STDOUT (FORMAT binary)")
    }
}
