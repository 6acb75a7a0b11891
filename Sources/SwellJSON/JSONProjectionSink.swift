/// Receives the projected fields of each record from a `JSONProjectionReader`.
///
/// For every record, in page order: either `field` once per field of the
/// projection, in field order (an object record), or `notAnObject` once (any
/// other record); then `recordEnd`. The reader is generic over its sink, so
/// these calls are direct, and buffers given to them are valid only during
/// the call. Whatever a method throws stops the reader and is rethrown
/// unchanged from `feed` or `finish`.
public protocol JSONProjectionSink {
    /// The value of field `field` (an index into `JSONProjection.fields`) in the current record.
    mutating func field(_ field: Int, value: JSONFieldValue) throws

    /// The current record is not an object (`found`: what it is instead); its fields are not given.
    mutating func notAnObject(_ found: JSONFieldMismatch) throws

    /// The current record ended: its 0-based index in the page, where its first byte
    /// is, and `end`, the page offset one past its last byte (its text is the page's
    /// bytes `start.byteOffset..<end`).
    mutating func recordEnd(index: Int, start: JSONPosition, end: Int) throws

    /// With `JSONProjection.wholeRecords`: the current record, built whole (given before its
    /// `recordEnd`, in place of its fields).
    mutating func record(_ value: JSONValue) throws
}

extension JSONProjectionSink {
    /// A sink of fields takes no whole records.
    public mutating func record(_ value: JSONValue) throws {}
}
