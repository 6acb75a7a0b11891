/// The iterative, resumable JSON parser behind `JSONValue.parse` and `JSONPageReader`.
///
/// It reads one buffer at a time and keeps everything it needs between
/// buffers in its own stacks, so it never recurses and can stop before any
/// token: `step` returns `.needMore` at the first byte of a token that the
/// buffer does not hold whole (unless `isFinal`), and the caller hands that
/// token back, completed, in the next buffer. Between tokens nothing of the
/// input is kept; values under construction live in `elements` and `members`.
///
/// Where a finished value goes is its `Slot`: into the array or object being
/// built, out as a record, into the captures, or nowhere (validated and
/// dropped). Page-level objects on the way to the records array or a capture
/// are walked (`nav`) without being built.
struct JSONMachine: Sendable {
    enum Mode: Sendable { case document, ndjson, page }

    enum Step {
        /// A record completed.
        case record(JSONValue)
        /// The buffer ended (see `step`).
        case needMore
        /// A record starts at `position` and is left to the caller (`yieldsRecordStarts`).
        case recordStart
    }

    enum State: UInt8, Sendable {
        case value, valueOrArrayEnd, keyOrObjectEnd, key, colon, afterElement, afterMember, end, lineEnd
    }

    enum Slot: Equatable, Sendable {
        case element, member, skip, emit, records, nav, capture(Int)
    }

    enum FrameKind: UInt8, Sendable {
        case array, object, skipArray, skipObject, records, nav

        var isArray: Bool { self == .array || self == .skipArray || self == .records }
    }

    struct Frame: Sendable {
        var kind: FrameKind
        /// Where this container goes when it closes.
        var slot: Slot
        /// The first index in `elements` (arrays) or `members` (objects) that belongs to it.
        var start: Int
    }

    let mode: Mode
    let maxDepth: Int
    /// Page mode: the keys to the records array; nil means the page is the array.
    let recordsPath: [String]?
    let capturePaths: [[String]]
    /// Whether `step` stops at the first byte of each record (`.recordStart`)
    /// instead of building it: the caller then reads the record's bytes with
    /// a parser of its own and calls `recordEnded` after them.
    let yieldsRecordStarts: Bool

    var state: State = .value
    /// Containers open around the document (a record inside a page: `restartDocument(depth:)`),
    /// counted against `maxDepth` as the page's are.
    var baseDepth = 0
    var slot: Slot
    var frames: [Frame] = []
    var elements: [JSONValue] = []
    var members: [(key: String, value: JSONValue)] = []
    var pendingKeys: [String] = []
    var navPath: [String] = []
    var pendingNavKey = ""
    var scratch: [UInt8] = []

    /// Values found at `capturePaths` while walking the page (an explicit null is kept as `.null`).
    var captures: [[String]: JSONValue] = [:]
    /// Whether the page held an array (or null) at `recordsPath`.
    var sawRecords = false
    /// The current 1-based line and the offset of its first byte.
    var line = 1
    var lineStart = 0

    /// Whether a page without a records path that is one object is that one record
    /// (`JSONPageReader`'s `objectPageIsRecord`) rather than an error.
    let objectPageIsRecord: Bool
    /// Whether a page without the array at `recordsPath` is a page without records rather than an error.
    let recordsMayBeMissing: Bool

    init(mode: Mode, recordsPath: [String]?, capturePaths: [[String]], maxDepth: Int, yieldsRecordStarts: Bool = false,
         objectPageIsRecord: Bool = false, recordsMayBeMissing: Bool = false) {
        self.recordsMayBeMissing = recordsMayBeMissing
        self.mode = mode
        self.objectPageIsRecord = objectPageIsRecord && mode == .page
        self.maxDepth = maxDepth
        self.yieldsRecordStarts = yieldsRecordStarts
        let path = recordsPath.flatMap { $0.isEmpty ? nil : $0 }
        self.recordsPath = mode == .page ? path : nil
        self.capturePaths = mode == .page ? capturePaths : []
        switch mode {
        case .document, .ndjson: slot = .emit
        case .page: slot = path == nil ? .records : .nav
        }
    }

    /// Back to the start of a document (document or NDJSON mode), keeping the stacks' capacity: a
    /// parser of many small documents allocates its stacks once (`JSONValue.Parser`). `depth`:
    /// the containers open around it (a record of a page), counted against `maxDepth`.
    mutating func restartDocument(depth: Int = 0) {
        baseDepth = depth
        state = .value
        slot = .emit
        frames.removeAll(keepingCapacity: true)
        elements.removeAll(keepingCapacity: true)
        members.removeAll(keepingCapacity: true)
        pendingKeys.removeAll(keepingCapacity: true)
        navPath.removeAll(keepingCapacity: true)
        pendingNavKey = ""
        scratch.removeAll(keepingCapacity: true)
        captures = [:]
        sawRecords = false
        line = 1
        lineStart = 0
    }

    /// How many arrays and objects are open: the depth of a record that starts now.
    var depth: Int { frames.count }

    /// Takes on the line count of the parser that read a record's bytes (`yieldsRecordStarts`).
    mutating func setLine(_ line: Int, lineStart: Int) {
        self.line = line
        self.lineStart = lineStart
    }

    /// Goes on after a record that the caller read (`yieldsRecordStarts`): the
    /// next byte is the one after the record's value.
    mutating func recordEnded() {
        afterValue()
    }

    /// Between records (`yieldsRecordStarts`): moves over the separator after
    /// a record when the next record starts right after it — a line end in
    /// NDJSON, a comma and whitespace in an array of records — and returns
    /// true with `position` at the record's first byte. Anything else (a
    /// blank line, the array's end, an error, the buffer's end) changes
    /// nothing and returns false: `step` then reads it.
    mutating func skipToNextRecord(_ buffer: UnsafeRawBufferPointer, _ position: inout Int, base: Int) -> Bool {
        let end = buffer.count
        var index = position
        var line = self.line
        var lineStart = self.lineStart
        if state == .lineEnd {
            if index < end, buffer[index] == 0x0D { index += 1 }
            guard index < end, buffer[index] == 0x0A else { return false }
            index += 1
            line += 1
            lineStart = base + index
        } else if state == .afterElement, frames.last?.kind == .records {
            guard index < end, buffer[index] == UInt8(ascii: ",") else { return false }
            index += 1
            while index < end {
                let byte = buffer[index]
                guard byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A else { break }
                index += 1
                if byte == 0x0A {
                    line += 1
                    lineStart = base + index
                }
            }
        } else {
            return false
        }
        guard index < end, JSONMachine.startsValue(buffer[index]) else { return false }
        position = index
        self.line = line
        self.lineStart = lineStart
        state = .value
        slot = .emit
        return true
    }

    /// The records path as written in a pipeline file, e.g. "meta.items".
    var recordsPathText: String { recordsPath?.joined(separator: ".") ?? "" }

    /// An error at an absolute byte offset on the current line.
    func error(_ message: String, at offset: Int) -> JSONError {
        JSONError(message, byteOffset: offset, line: line, column: max(1, offset - lineStart + 1))
    }

    /// Throws unless the input so far is a whole page: every container closed,
    /// and in page mode the records array found (or null).
    func checkComplete(at offset: Int) throws(JSONError) {
        switch state {
        case .end, .lineEnd:
            break
        case .value where mode == .ndjson && frames.isEmpty:
            break
        case .value where frames.isEmpty:
            throw error(mode == .page ? "the page is empty" : "expected a value", at: offset)
        default:
            throw error("unexpected end of the page", at: offset)
        }
        if mode == .page, recordsPath != nil, !sawRecords, !recordsMayBeMissing {
            throw error("no array at '\(recordsPathText)'", at: offset)
        }
    }

    /// The values found at `capturePaths`: those met on the walk, and those
    /// inside another captured value (capturing ["meta"] and ["meta", "next"]).
    var capturedValues: [[String]: JSONValue] {
        var result = captures
        for path in capturePaths where result[path] == nil {
            for length in stride(from: path.count - 1, to: 0, by: -1) {
                if let outer = captures[Array(path[..<length])] {
                    result[path] = outer.value(at: Array(path[length...]))
                    break
                }
            }
        }
        return result
    }

    /// Parses from `position` until a record completes (`.record`, `position`
    /// after it) or the buffer ends (`.needMore`, `position` at the first byte
    /// of an unfinished token, or at the end).
    ///
    /// `base` is the page offset of `buffer[0]`. With `isFinal`, the end of the
    /// buffer is the end of the page: an unfinished token is an error.
    mutating func step(
        _ buffer: UnsafeRawBufferPointer, _ position: inout Int, base: Int, isFinal: Bool
    ) throws(JSONError) -> Step {
        let end = buffer.count
        var index = position
        while true {
            var byte: UInt8 = 0
            while index < end {
                byte = buffer[index]
                if byte > 0x20 { break }
                if byte == 0x20 || byte == 0x09 || byte == 0x0D {
                    index += 1
                } else if byte == 0x0A {
                    try newline(at: base + index)
                    index += 1
                } else {
                    break
                }
            }
            guard index < end else {
                position = index
                return .needMore
            }
            switch state {
            case .value, .valueOrArrayEnd:
                if byte == UInt8(ascii: "]"), state == .valueOrArrayEnd {
                    index += 1
                    if let record = try close(at: base + index - 1) {
                        position = index
                        return .record(record)
                    }
                    continue
                }
                if objectPageIsRecord, slot == .records, frames.isEmpty, byte == UInt8(ascii: "{") {
                    // A page that is one object: that object is its one record.
                    slot = .emit
                    sawRecords = true
                }
                if yieldsRecordStarts, slot == .emit, JSONMachine.startsValue(byte) {
                    position = index
                    return .recordStart
                }
                let value: JSONValue
                let valueStart = base + index
                switch byte {
                case UInt8(ascii: "\""):
                    guard let scanned = try scanString(buffer, from: index, base: base) else {
                        if isFinal { throw error("unterminated string", at: base + index) }
                        position = index
                        return .needMore
                    }
                    index = scanned.end
                    value = .string(scanned.string)
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    try open(object: byte == UInt8(ascii: "{"), at: base + index)
                    index += 1
                    continue
                case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                    guard let next = try scanNumber(buffer, from: index, base: base, isFinal: isFinal) else {
                        position = index
                        return .needMore
                    }
                    let text = String(decoding: UnsafeRawBufferPointer(rebasing: buffer[index..<next]), as: UTF8.self)
                    value = .number(JSONNumber(text: text))
                    index = next
                case UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"):
                    let (literal, literalValue): (StaticString, JSONValue) = switch byte {
                    case UInt8(ascii: "t"): ("true", .bool(true))
                    case UInt8(ascii: "f"): ("false", .bool(false))
                    default: ("null", .null)
                    }
                    guard try scanLiteral(literal, buffer, from: index, base: base, isFinal: isFinal) else {
                        position = index
                        return .needMore
                    }
                    value = literalValue
                    index += literal.utf8CodeUnitCount
                default:
                    throw unexpected(byte, at: base + index)
                }
                if let record = try complete(value, at: valueStart) {
                    position = index
                    return .record(record)
                }
            case .keyOrObjectEnd, .key:
                if byte == UInt8(ascii: "}"), state == .keyOrObjectEnd {
                    index += 1
                    if let record = try close(at: base + index - 1) {
                        position = index
                        return .record(record)
                    }
                    continue
                }
                guard byte == UInt8(ascii: "\"") else {
                    throw unexpected(byte, at: base + index)
                }
                guard let scanned = try scanString(buffer, from: index, base: base) else {
                    if isFinal { throw error("unterminated string", at: base + index) }
                    position = index
                    return .needMore
                }
                index = scanned.end
                takeKey(scanned.string)
                state = .colon
            case .colon:
                guard byte == UInt8(ascii: ":") else { throw unexpected(byte, at: base + index) }
                index += 1
                state = .value
            case .afterElement:
                if byte == UInt8(ascii: ",") {
                    index += 1
                    state = .value
                    slot = elementSlot()
                } else if byte == UInt8(ascii: "]") {
                    index += 1
                    if let record = try close(at: base + index - 1) {
                        position = index
                        return .record(record)
                    }
                } else {
                    throw unexpected(byte, at: base + index)
                }
            case .afterMember:
                if byte == UInt8(ascii: ",") {
                    index += 1
                    state = .key
                } else if byte == UInt8(ascii: "}") {
                    index += 1
                    if let record = try close(at: base + index - 1) {
                        position = index
                        return .record(record)
                    }
                } else {
                    throw unexpected(byte, at: base + index)
                }
            case .end, .lineEnd:
                throw unexpected(byte, at: base + index)
            }
        }
    }
}
