/// Streams the records of one page, fed in chunks as they arrive.
///
/// The page is never held whole and no tree of it is built: each record is
/// built on its own, handed to `onRecord`, and dropped. Between chunks the
/// reader keeps only the token that a chunk cut in two (`bufferedByteCount`)
/// and the part of the current record already parsed, so memory stays about
/// the size of the largest record whatever the size of the page.
///
/// - `.json`: the page is one JSON value. The records are the elements of
///   the array at `recordsPath`, or of the page itself when `recordsPath` is
///   nil (or empty). A `null` at `recordsPath` means zero records; a missing
///   path, or a value that is neither an array nor null, is a `JSONError`.
/// - `.ndjson`: every non-blank line is one record (any JSON value); lines end
///   with `\n` or `\r\n`, and a record may not span lines. `recordsPath` and
///   `capturePaths` are not used.
///
/// Input is strict RFC 8259 in UTF-8 without a byte-order mark; nesting
/// deeper than `maxDepth` arrays and objects (counted from the page's top) is
/// an error. A parse error is a `JSONError` with the page offset, line and
/// column of the first bad byte. After any error, including one thrown by
/// `onRecord`, the reader must not be used again: later calls throw.
///
/// A reader is a value used from one place at a time; it may be moved
/// between threads.
public struct JSONPageReader: Sendable {
    /// How a page is laid out.
    public enum Format: Sendable {
        /// The page is one JSON value holding an array of records.
        case json
        /// Newline-delimited JSON: one record per line.
        case ndjson
    }

    private var machine: JSONMachine
    /// The unfinished token that the last chunk ended in.
    private var carry = CarriedToken()
    /// Bytes fed so far.
    private var fedCount = 0
    private var failed = false
    private var finished = false

    /// Creates a reader for one page.
    ///
    /// - Parameters:
    ///   - format: `.json` or `.ndjson`.
    ///   - recordsPath: dot-path keys to the array of records in a json page; nil means the page itself is the array.
    ///   - capturePaths: other values of the page to keep (e.g. [["next"]], [["meta","next_cursor"]]) — small
    ///     scalars or objects outside the records array. A path inside another one is taken from the
    ///     outer value. A path that leads to or into the records array is never captured.
    ///   - maxDepth: the deepest nesting of arrays and objects allowed, counted from the top of the page
    ///     (for ndjson, of each line).
    ///   - objectPageIsRecord: with no `recordsPath`, a json page that is one object is that
    ///     one record (otherwise it is an error: not an array of records).
    ///   - recordsMayBeMissing: a page with nothing at `recordsPath` has no records (otherwise
    ///     it is an error); `sawRecords` tells which it was.
    public init(format: Format, recordsPath: [String]?, capturePaths: [[String]] = [], maxDepth: Int = 512,
                objectPageIsRecord: Bool = false, recordsMayBeMissing: Bool = false) {
        machine = JSONMachine(
            mode: format == .json ? .page : .ndjson,
            recordsPath: recordsPath,
            capturePaths: capturePaths,
            maxDepth: maxDepth,
            objectPageIsRecord: objectPageIsRecord,
            recordsMayBeMissing: recordsMayBeMissing
        )
    }

    /// Bytes held back between chunks (an unfinished token or record): must stay about the size of the largest record.
    ///
    /// Only the token that the last chunk cut in two is held as bytes, so this
    /// is at most the size of the largest string or number of the page.
    public var bufferedByteCount: Int { carry.bytes.count }

    /// Whether the page held its records array (or null there) so far.
    public var sawRecords: Bool { machine.sawRecords }

    /// Number of records delivered so far.
    public private(set) var recordCount = 0

    /// Parses the next chunk; calls onRecord for every record completed in it, in order (index = records so far, 0-based).
    ///
    /// The chunk is read in place; only its unfinished last token is copied.
    ///
    /// - Throws: `JSONError` for invalid input; whatever `onRecord` throws, unchanged.
    public mutating func feed(
        _ bytes: UnsafeRawBufferPointer,
        onRecord: (_ index: Int, _ record: JSONValue) throws -> Void
    ) throws {
        try checkUsable()
        failed = true
        var start = 0
        if !carry.isEmpty {
            let (taken, complete) = carry.extend(from: bytes)
            start = taken
            if complete {
                let leftover = try runCarry(isFinal: false, onRecord: onRecord)
                if let leftover {
                    (leftover.bytes + Array(bytes[taken...])).withUnsafeBytes { carry.start($0, base: leftover.base) }
                    fedCount += bytes.count
                    failed = false
                    return
                }
            }
        }
        var position = start
        while case .record(let record) = try machine.step(bytes, &position, base: fedCount, isFinal: false) {
            try deliver(record, onRecord)
        }
        if position < bytes.count {
            carry.start(UnsafeRawBufferPointer(rebasing: bytes[position...]), base: fedCount + position)
        }
        fedCount += bytes.count
        failed = false
    }

    /// Ends the page: throws if it is incomplete; returns the captured values.
    ///
    /// A capture path that is present in the page maps to its value (an
    /// explicit `null` to `.null`); a path that is absent is missing from the
    /// dictionary. For ndjson pages the dictionary is empty.
    ///
    /// - Throws: `JSONError` when the page ends early (unterminated string,
    ///   unclosed array, …), has no array at `recordsPath`, or is empty (json);
    ///   whatever `onRecord` throws for a last record completed here, unchanged.
    public mutating func finish(
        onRecord: (_ index: Int, _ record: JSONValue) throws -> Void
    ) throws -> [[String]: JSONValue] {
        try checkUsable()
        failed = true
        if !carry.isEmpty {
            _ = try runCarry(isFinal: true, onRecord: onRecord)
        }
        try machine.checkComplete(at: fedCount)
        finished = true
        failed = false
        return machine.capturedValues
    }

    private func checkUsable() throws(JSONError) {
        if finished {
            throw machine.error("the page was already finished", at: fedCount)
        }
        if failed {
            throw machine.error("the reader stopped at an earlier error", at: fedCount)
        }
    }

    private mutating func deliver(_ record: JSONValue, _ onRecord: (Int, JSONValue) throws -> Void) throws {
        let index = recordCount
        recordCount += 1
        try onRecord(index, record)
    }

    /// Parses the carried token (now complete, or the page's end); returns
    /// whatever the parser could not consume (nil unless the token still needs
    /// more input) and its page offset.
    private mutating func runCarry(
        isFinal: Bool, onRecord: (Int, JSONValue) throws -> Void
    ) throws -> (bytes: [UInt8], base: Int)? {
        let base = carry.base
        var bytes = carry.take()
        var position = 0
        try bytes.withUnsafeBytes { buffer in
            while case .record(let record) = try machine.step(buffer, &position, base: base, isFinal: isFinal) {
                try deliver(record, onRecord)
            }
        }
        if position < bytes.count {
            return (Array(bytes[position...]), base + position)
        }
        carry.recycle(&bytes)
        return nil
    }
}
