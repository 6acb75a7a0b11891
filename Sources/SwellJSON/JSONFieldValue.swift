/// What a `JSONProjectionReader` found for one field of one record.
///
/// The byte buffers point into the reader's own storage or into the chunk
/// being fed: they are valid only during the `JSONProjectionSink` call that
/// receives them. Copy what must outlive it.
public enum JSONFieldValue {
    /// The record has no value at the field's path.
    case missing
    /// The value is an explicit `null` (for every kind).
    case null
    /// An `.integer` field's value.
    case integer(Int64)
    /// A `.double` field's value.
    case double(Double)
    /// A `.boolean` field's value.
    case bool(Bool)
    /// A `.string` field's UTF-8 bytes (escapes decoded), or a `.text` field's text.
    case string(UnsafeRawBufferPointer)
    /// A `.json` field's compact JSON text.
    case json(UnsafeRawBufferPointer)
    /// A value that the field's kind does not take: what was there instead.
    case mismatch(JSONFieldMismatch)
}

@available(*, unavailable)
extension JSONFieldValue: Sendable {}
