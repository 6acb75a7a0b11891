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

    private enum State: UInt8, Sendable {
        case value, valueOrArrayEnd, keyOrObjectEnd, key, colon, afterElement, afterMember, end, lineEnd
    }

    private enum Slot: Equatable, Sendable {
        case element, member, skip, emit, records, nav, capture(Int)
    }

    private enum FrameKind: UInt8, Sendable {
        case array, object, skipArray, skipObject, records, nav

        var isArray: Bool { self == .array || self == .skipArray || self == .records }
    }

    private struct Frame: Sendable {
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

    private var state: State = .value
    private var slot: Slot
    private var frames: [Frame] = []
    private var elements: [JSONValue] = []
    private var members: [(key: String, value: JSONValue)] = []
    private var pendingKeys: [String] = []
    private var navPath: [String] = []
    private var pendingNavKey = ""
    private var scratch: [UInt8] = []

    /// Values found at `capturePaths` while walking the page (an explicit null is kept as `.null`).
    private var captures: [[String]: JSONValue] = [:]
    /// Whether the page held an array (or null) at `recordsPath`.
    private(set) var sawRecords = false
    /// The current 1-based line and the offset of its first byte.
    private(set) var line = 1
    private(set) var lineStart = 0

    /// Whether a page without a records path that is one object is that one record
    /// (`JSONPageReader`'s `objectPageIsRecord`) rather than an error.
    private let objectPageIsRecord: Bool
    /// Whether a page without the array at `recordsPath` is a page without records rather than an error.
    private let recordsMayBeMissing: Bool

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

    // MARK: - Structure

    private mutating func newline(at offset: Int) throws(JSONError) {
        if mode == .ndjson {
            if state == .lineEnd {
                state = .value
                slot = .emit
            } else if !(state == .value && frames.isEmpty) {
                throw error("unexpected end of line inside a record (NDJSON records are one line each)", at: offset)
            }
        }
        line += 1
        lineStart = offset + 1
    }

    /// What the next element of the innermost array becomes.
    private func elementSlot() -> Slot {
        switch frames.last?.kind {
        case .array: .element
        case .records: .emit
        default: .skip
        }
    }

    /// Records a key read in the innermost object and decides where its value goes.
    private mutating func takeKey(_ key: String) {
        switch frames.last?.kind {
        case .object:
            pendingKeys.append(key)
            slot = .member
        case .nav:
            pendingNavKey = key
            slot = navSlot(for: navPath + [key])
        default:
            slot = .skip
        }
    }

    private func navSlot(for path: [String]) -> Slot {
        if let recordsPath, recordsPath.starts(with: path) {
            return path.count == recordsPath.count ? .records : .nav
        }
        if let index = capturePaths.firstIndex(of: path) { return .capture(index) }
        if capturePaths.contains(where: { $0.starts(with: path) }) { return .nav }
        return .skip
    }

    private mutating func open(object: Bool, at offset: Int) throws(JSONError) {
        guard frames.count < maxDepth else {
            throw error("nesting deeper than \(maxDepth)", at: offset)
        }
        switch slot {
        case .element, .member, .emit, .capture:
            frames.append(Frame(kind: object ? .object : .array, slot: slot, start: object ? members.count : elements.count))
        case .skip:
            frames.append(Frame(kind: object ? .skipObject : .skipArray, slot: .skip, start: 0))
        case .records:
            guard !object else { throw notAnArray("an object", at: offset) }
            sawRecords = true
            frames.append(Frame(kind: .records, slot: .skip, start: 0))
        case .nav:
            if object {
                if !frames.isEmpty { navPath.append(pendingNavKey) }
                frames.append(Frame(kind: .nav, slot: .skip, start: 0))
            } else if frames.isEmpty {
                throw error("no array at '\(recordsPathText)': the page is an array, not an object", at: offset)
            } else {
                frames.append(Frame(kind: .skipArray, slot: .skip, start: 0))
            }
        }
        state = object ? .keyOrObjectEnd : .valueOrArrayEnd
        if !object { slot = elementSlot() }
    }

    /// Closes the innermost container (its closing byte is at `offset`).
    private mutating func close(at offset: Int) throws(JSONError) -> JSONValue? {
        guard let frame = frames.popLast() else { return nil }
        slot = frame.slot
        switch frame.kind {
        case .array:
            return try complete(.array(JSONMachine.popSuffix(of: &elements, from: frame.start)), at: offset + 1)
        case .object:
            let object = JSONObject(members: JSONMachine.popSuffix(of: &members, from: frame.start))
            return try complete(.object(object), at: offset + 1)
        case .nav:
            if !frames.isEmpty { navPath.removeLast() }
        case .skipArray, .skipObject, .records:
            break
        }
        afterValue()
        return nil
    }

    /// Moves `stack[start...]` out into a new array, in order, without copying its elements.
    private static func popSuffix<Element>(of stack: inout [Element], from start: Int) -> [Element] {
        let count = stack.count - start
        // An empty array without `unsafeUninitializedCapacity`: with capacity 0 it writes the
        // count into the shared empty-array storage, which other threads read (a race
        // ThreadSanitizer reports, though it writes the 0 that is there).
        guard count > 0 else { return [] }
        return [Element](unsafeUninitializedCapacity: count) { buffer, initialized in
            guard let base = buffer.baseAddress else { return }
            var index = count
            while index > 0 {
                index -= 1
                (base + index).initialize(to: stack.removeLast())
            }
            initialized = count
        }
    }

    /// Sends a finished value to the current slot; returns it when it is a record.
    private mutating func complete(_ value: consuming JSONValue, at offset: Int) throws(JSONError) -> JSONValue? {
        var record: JSONValue?
        switch slot {
        case .element:
            elements.append(value)
        case .member:
            members.append((key: pendingKeys.removeLast(), value: value))
        case .skip:
            break
        case .emit:
            record = value
        case .capture(let index):
            captures[capturePaths[index]] = value
        case .records:
            guard value == .null else { throw notAnArray(value.kindDescription, at: offset) }
            sawRecords = true
        case .nav:
            if frames.isEmpty {
                throw error("no array at '\(recordsPathText)': the page is \(value.kindDescription), not an object", at: offset)
            }
        }
        afterValue()
        return record
    }

    private mutating func afterValue() {
        if let top = frames.last {
            state = top.kind.isArray ? .afterElement : .afterMember
        } else {
            state = mode == .ndjson ? .lineEnd : .end
        }
    }


    private func notAnArray(_ found: String, at offset: Int) -> JSONError {
        if recordsPath == nil {
            return error("the page is \(found), not an array of records", at: offset)
        }
        return error("'\(recordsPathText)' is \(found), not an array of records", at: offset)
    }

    /// The error for an unexpected byte, worded by what the parser expected there.
    private func unexpected(_ byte: UInt8, at offset: Int) -> JSONError {
        if offset == 0, byte == 0xEF {
            return error("byte-order mark at the start of the page", at: offset)
        }
        let expected: String
        switch state {
        case .value:
            if frames.isEmpty {
                expected = "expected a value"
            } else if frames.last?.kind.isArray == true {
                expected = "expected a value after ','"
            } else {
                expected = "expected a value after ':'"
            }
        case .valueOrArrayEnd: expected = "expected a value or ']'"
        case .keyOrObjectEnd: expected = "expected a string key or '}'"
        case .key: expected = "expected a string key after ','"
        case .colon: expected = "expected ':' after an object key"
        case .afterElement: expected = "expected ',' or ']' after an array element"
        case .afterMember: expected = "expected ',' or '}' after an object member"
        case .end: expected = mode == .document ? "unexpected data after the value" : "unexpected data after the end of the page"
        case .lineEnd: expected = "expected the end of the line after a record"
        }
        return error(expected, at: offset)
    }

    // MARK: - Scalars

    /// Whether `byte` can start a value: a string, number, literal, array or object.
    static func startsValue(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "{"), UInt8(ascii: "["), UInt8(ascii: "-"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"):
            true
        default:
            false
        }
    }

    /// A scanner for a token on the current line.
    private var scanner: JSONScanner { JSONScanner(line: line, lineStart: lineStart) }

    /// Scans a number starting at `start`; returns the index after it, or nil when
    /// the buffer ends where the number could go on (and not `isFinal`).
    private func scanNumber(
        _ buffer: UnsafeRawBufferPointer, from start: Int, base: Int, isFinal: Bool
    ) throws(JSONError) -> Int? {
        try scanner.number(buffer, from: start, base: base, isFinal: isFinal)
    }

    /// Checks `true`, `false` or `null` at `start`; false when the buffer ends inside it (and not `isFinal`).
    private func scanLiteral(
        _ literal: StaticString, _ buffer: UnsafeRawBufferPointer, from start: Int, base: Int, isFinal: Bool
    ) throws(JSONError) -> Bool {
        try scanner.literal(literal, buffer, from: start, base: base, isFinal: isFinal)
    }

    /// Scans a string whose opening quote is at `start`; returns it and the index
    /// after its closing quote, or nil when the buffer ends inside it.
    private mutating func scanString(
        _ buffer: UnsafeRawBufferPointer, from start: Int, base: Int
    ) throws(JSONError) -> (string: String, end: Int)? {
        if !scratch.isEmpty { scratch.removeAll(keepingCapacity: true) }
        guard let (end, escaped) = try scanner.string(buffer, from: start, base: base, decodingInto: &scratch) else { return nil }
        if escaped {
            return (String(decoding: scratch, as: UTF8.self), end)
        }
        return (String(decoding: UnsafeRawBufferPointer(rebasing: buffer[(start + 1)..<(end - 1)]), as: UTF8.self), end)
    }
}
