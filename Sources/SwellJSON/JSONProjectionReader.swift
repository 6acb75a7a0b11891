/// Streams the records of one page, fed in chunks, straight into the fields
/// of a `JSONProjection`: one pass over each record's bytes, no tree.
///
/// It reads pages exactly as `JSONPageReader` does — the same formats,
/// records path, captures, strictness, `maxDepth` and error positions, fed in
/// chunks of any size — but instead of a `JSONValue` per record it gives a
/// `JSONProjectionSink` the record's value at each field's path: numbers
/// read in place, strings without escapes handed over where they are in the
/// chunk, escaped ones decoded into a buffer the reader keeps. Values outside
/// the projection are validated (grammar, UTF-8, escapes, depth) and dropped.
/// Once its buffers have grown to the page's largest record, it allocates
/// nothing per record.
///
/// Invalid JSON anywhere, in a projected value or not, is a `JSONError` with
/// the offset, line and column `JSONPageReader` gives. A value that does not
/// fit its field's kind is not an error: the sink gets a `.mismatch` and
/// decides. After any error, including one thrown by the sink, the reader
/// must not be used again: later calls throw.
///
/// A reader is a value used from one place at a time; it may be moved
/// between threads between calls.
public struct JSONProjectionReader: Sendable {
    @usableFromInline var parser: ProjectingParser

    /// Creates a reader for one page.
    ///
    /// - Parameters:
    ///   - projection: the fields to read from every record.
    ///   - format: `.json` or `.ndjson`.
    ///   - recordsPath: dot-path keys to the array of records in a json page; nil means the page itself is the array.
    ///   - capturePaths: other values of the page to keep, as for `JSONPageReader`.
    ///   - maxDepth: the deepest nesting of arrays and objects allowed, counted from the top of the page
    ///     (for ndjson, of each line).
    ///   - objectPageIsRecord, recordsMayBeMissing: as for `JSONPageReader`.
    public init(
        projection: JSONProjection,
        format: JSONPageReader.Format,
        recordsPath: [String]?,
        capturePaths: [[String]] = [],
        maxDepth: Int = 512,
        objectPageIsRecord: Bool = false,
        recordsMayBeMissing: Bool = false
    ) {
        parser = ProjectingParser(
            projection: projection, format: format, recordsPath: recordsPath, capturePaths: capturePaths, maxDepth: maxDepth,
            objectPageIsRecord: objectPageIsRecord, recordsMayBeMissing: recordsMayBeMissing
        )
    }

    /// Whether the page held its records array (or null there) so far.
    public var sawRecords: Bool { parser.sawRecords }

    /// Number of records completed so far.
    public var recordCount: Int { parser.recordCount }

    /// Where the page's bytes are still needed after the chunks fed so far: the page offset
    /// of the record a chunk's end cut (its first byte), or of the bytes held back
    /// (`bufferedByteCount`), whichever is earlier. A caller that keeps the page's bytes
    /// to read a record's text again may let go of everything before it.
    public var earliestNeededOffset: Int {
        let held = parser.fedByteCount - parser.bufferedByteCount
        return min(parser.pendingRecordStart ?? held, held)
    }

    /// Bytes held back between chunks: the token that the last chunk cut in two.
    ///
    /// The values of a record cut by a chunk's end are kept too, in buffers
    /// about the size of that record.
    public var bufferedByteCount: Int { parser.bufferedByteCount }

    /// Parses the next chunk; gives `sink` every record completed in it, in order.
    ///
    /// The chunk is read in place and must stay valid only during the call.
    ///
    /// - Throws: `JSONError` for invalid input; whatever `sink` throws, unchanged.
    @inlinable
    public mutating func feed<Sink: JSONProjectionSink>(_ bytes: UnsafeRawBufferPointer, into sink: inout Sink) throws {
        try parser.beginChunk(bytes)
        while try parser.nextRecord(bytes) {
            try deliver(into: &sink)
        }
        parser.endChunk(bytes)
    }

    /// Ends the page: throws if it is incomplete; returns the captured values
    /// (as `JSONPageReader.finish` does).
    ///
    /// - Throws: `JSONError` when the page ends early, has no array at
    ///   `recordsPath`, or is empty (json); whatever `sink` throws for a last
    ///   record completed here, unchanged.
    @inlinable
    public mutating func finish<Sink: JSONProjectionSink>(into sink: inout Sink) throws -> [[String]: JSONValue] {
        try parser.beginFinish()
        while try parser.nextRecord(UnsafeRawBufferPointer(start: nil, count: 0)) {
            try deliver(into: &sink)
        }
        return try parser.endFinish()
    }

    @inlinable
    mutating func deliver<Sink: JSONProjectionSink>(into sink: inout Sink) throws {
        if let built = parser.builtRecord {
            try sink.record(built)
            try sink.recordEnd(index: parser.recordCount - 1, start: parser.recordStart, end: parser.recordEnd)
            return
        }
        try parser.withRecord { record in
            if let found = record.notAnObject {
                try sink.notAnObject(found)
            } else {
                for field in 0..<record.fieldCount {
                    try sink.field(field, value: record[field])
                }
            }
        }
        try sink.recordEnd(index: parser.recordCount - 1, start: parser.recordStart, end: parser.recordEnd)
    }
}
