/// What a slot holds for the current record.
///
/// Bytes are in the record's `strings` or `text`, or still in the input
/// (`start` is then their address, valid only until the input buffer goes
/// away, which `RecordProjector.pin` is called before; so a slot never holds
/// an address between two calls of the reader, and may cross threads).
///
/// Read by `JSONProjectionReader`'s inlined delivery, hence `@usableFromInline`.
@usableFromInline
struct FieldSlot: Sendable {
    @usableFromInline
    enum Tag: UInt8, Sendable { case missing, null, integer, double, boolean, string, json, mismatch }

    @usableFromInline
    enum Place: UInt8, Sendable { case input, strings, text }

    @usableFromInline var tag = Tag.missing
    @usableFromInline var place = Place.input
    /// For a mismatch: what was found.
    @usableFromInline var found = JSONValueKind.null
    /// An integer's or a double's bits, or a boolean (0 or 1).
    @usableFromInline var scalar: UInt64 = 0
    /// Where the bytes start: an address in the input, or an offset in `strings` or `text`.
    @usableFromInline var start = 0
    /// How many bytes; -1 while a captured container is still open.
    @usableFromInline var count = 0
    /// For a mismatch: where the value starts.
    @usableFromInline var position = JSONPosition(byteOffset: 0, line: 0, column: 0)

    init() {}

    /// The value, its bytes in the record's `strings` or `text`, or in the input.
    @inlinable
    func value(strings: UnsafeRawBufferPointer, text: UnsafeRawBufferPointer) -> JSONFieldValue {
        switch tag {
        case .missing: return .missing
        case .null: return .null
        case .integer: return .integer(Int64(bitPattern: scalar))
        case .double: return .double(Double(bitPattern: scalar))
        case .boolean: return .bool(scalar != 0)
        case .string: return .string(bytes(strings: strings, text: text))
        case .json: return .json(bytes(strings: strings, text: text))
        case .mismatch:
            let bytes = bytes(strings: strings, text: text)
            var cut = min(bytes.count, JSONFieldMismatch.excerptLimit)
            if cut < bytes.count {
                while cut > 0, bytes[cut] & 0xC0 == 0x80 { cut -= 1 }
            }
            return .mismatch(JSONFieldMismatch(found: found, excerpt: UnsafeRawBufferPointer(rebasing: bytes[..<cut]), position: position))
        }
    }

    @inlinable
    func bytes(strings: UnsafeRawBufferPointer, text: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        switch place {
        case .input: UnsafeRawBufferPointer(start: UnsafeRawPointer(bitPattern: start), count: count)
        case .strings: UnsafeRawBufferPointer(rebasing: strings[start..<(start + count)])
        case .text: UnsafeRawBufferPointer(rebasing: text[start..<(start + count)])
        }
    }
}
