/// Reads one record's bytes for a `JSONProjectionReader`, writing the values
/// at the projection's paths into slots and validating everything else.
///
/// The grammar, the strictness and the error messages are `JSONMachine`'s,
/// and so is the way it resumes: `step` stops at the first byte of a token
/// that its buffer does not hold whole, and the reader hands that token back
/// completed. Nothing is built: containers are a stack of frames, strings
/// without escapes stay where they are in the input (see `pin`), escaped ones
/// are decoded into `strings`, numbers are read in place, and the compact
/// text of captured containers (`.json` fields, excerpts) is written to
/// `text`. All buffers are kept from record to record.
struct RecordProjector: Sendable {
    enum State: UInt8, Sendable {
        case value, valueOrArrayEnd, keyOrObjectEnd, key, colon, afterElement, afterMember
    }

    struct Frame: Sendable {
        var isArray: Bool
        /// Whether the container's compact text is being captured for the slots of `valueNode`.
        var captured: Bool
        /// The node whose children the object's keys are matched against (-1: none).
        var keyNode: Int32
        /// The node the container is the value of (-1: none).
        var valueNode: Int32
    }

    let plan: JSONProjection.Plan
    let ndjson: Bool
    let maxDepth: Int

    /// The arrays and objects open around the record in the page.
    var baseDepth = 0
    var state = State.value
    var frames: [Frame] = []
    /// `frames.last?.keyNode`: the node the innermost object's keys are matched against (-1: none).
    var keyNode: Int32 = -1
    /// Whether the innermost container is an array.
    var inArray = false
    /// The node the next value belongs to (-1: none).
    var pendingNode: Int32 = -1
    /// How many captured containers are open: while any is, every token is also written to `text`.
    var emitting = 0

    /// One per slot of the plan; see `FieldSlot`.
    var slots: [FieldSlot]
    /// Decoded strings of this record (and values moved out of the input by `pin`).
    var strings: [UInt8] = []
    /// Compact JSON text of this record's captured values.
    var text: [UInt8] = []
    /// The current 1-based line and the offset of its first byte.
    var line = 1
    var lineStart = 0
    /// What the record's root is.
    var rootKind = JSONValueKind.object

    init(plan: JSONProjection.Plan, ndjson: Bool, maxDepth: Int) {
        self.plan = plan
        self.ndjson = ndjson
        self.maxDepth = maxDepth
        slots = Array(repeating: FieldSlot(), count: plan.slotKinds.count)
    }

    /// Starts a record at the current byte, `depth` containers deep in the page.
    mutating func begin(line: Int, lineStart: Int, depth: Int) {
        self.line = line
        self.lineStart = lineStart
        baseDepth = depth
        state = .value
        frames.removeAll(keepingCapacity: true)
        keyNode = -1
        inArray = false
        pendingNode = 0
        emitting = 0
        for index in slots.indices {
            slots[index].tag = .missing
        }
        strings.removeAll(keepingCapacity: true)
        text.removeAll(keepingCapacity: true)
    }

    /// Parses from `position` until the record ends (true, `position` after
    /// it) or the buffer ends (false, `position` at the first byte of an
    /// unfinished token, or at the end).
    ///
    /// `base` is the page offset of `buffer[0]`. With `isFinal`, the end of the
    /// buffer is the end of the page: an unfinished token is an error.
    mutating func step(
        _ buffer: UnsafeRawBufferPointer, _ position: inout Int, base: Int, isFinal: Bool
    ) throws(JSONError) -> Bool {
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
                return false
            }
            switch state {
            case .value, .valueOrArrayEnd:
                if byte == UInt8(ascii: "]"), state == .valueOrArrayEnd {
                    index += 1
                    if close(closer: byte) {
                        position = index
                        return true
                    }
                    continue
                }
                switch byte {
                case UInt8(ascii: "\""):
                    guard let scanned = try scanString(buffer, from: index, base: base) else {
                        if isFinal { throw error("unterminated string", at: base + index) }
                        position = index
                        return false
                    }
                    if pendingNode >= 0 || emitting > 0 {
                        takeString(buffer, from: index, scanned, base: base)
                    } else if let decoded = scanned.decodedStart {
                        strings.removeSubrange(decoded...)
                    }
                    index = scanned.end
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    try open(object: byte == UInt8(ascii: "{"), at: base + index)
                    index += 1
                    continue
                case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                    guard let next = try scanNumber(buffer, from: index, base: base, isFinal: isFinal) else {
                        position = index
                        return false
                    }
                    if pendingNode >= 0 || emitting > 0 {
                        takeNumber(buffer, from: index, to: next, base: base)
                    }
                    index = next
                case UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"):
                    let literal: StaticString = switch byte {
                    case UInt8(ascii: "t"): "true"
                    case UInt8(ascii: "f"): "false"
                    default: "null"
                    }
                    guard try scanLiteral(literal, buffer, from: index, base: base, isFinal: isFinal) else {
                        position = index
                        return false
                    }
                    let next = index + literal.utf8CodeUnitCount
                    if pendingNode >= 0 || emitting > 0 {
                        takeLiteral(buffer, from: index, to: next, base: base)
                    }
                    index = next
                default:
                    throw unexpected(byte, at: base + index)
                }
                if afterValue() {
                    position = index
                    return true
                }
            case .keyOrObjectEnd, .key:
                if byte == UInt8(ascii: "}"), state == .keyOrObjectEnd {
                    index += 1
                    if close(closer: byte) {
                        position = index
                        return true
                    }
                    continue
                }
                guard byte == UInt8(ascii: "\"") else {
                    throw unexpected(byte, at: base + index)
                }
                guard let scanned = try scanString(buffer, from: index, base: base) else {
                    if isFinal { throw error("unterminated string", at: base + index) }
                    position = index
                    return false
                }
                takeKey(buffer, from: index, scanned)
                index = scanned.end
                state = .colon
            case .colon:
                guard byte == UInt8(ascii: ":") else { throw unexpected(byte, at: base + index) }
                if emitting > 0 { text.append(byte) }
                index += 1
                state = .value
            case .afterElement:
                if byte == UInt8(ascii: ",") {
                    if emitting > 0 { text.append(byte) }
                    index += 1
                    state = .value
                } else if byte == UInt8(ascii: "]") {
                    index += 1
                    if close(closer: byte) {
                        position = index
                        return true
                    }
                } else {
                    throw unexpected(byte, at: base + index)
                }
            case .afterMember:
                if byte == UInt8(ascii: ",") {
                    if emitting > 0 { text.append(byte) }
                    index += 1
                    state = .key
                } else if byte == UInt8(ascii: "}") {
                    index += 1
                    if close(closer: byte) {
                        position = index
                        return true
                    }
                } else {
                    throw unexpected(byte, at: base + index)
                }
            }
        }
    }

    // MARK: - Structure

    private mutating func newline(at offset: Int) throws(JSONError) {
        if ndjson {
            throw error("unexpected end of line inside a record (NDJSON records are one line each)", at: offset)
        }
        line += 1
        lineStart = offset + 1
    }

    private mutating func open(object: Bool, at offset: Int) throws(JSONError) {
        guard baseDepth + frames.count < maxDepth else {
            throw error("nesting deeper than \(maxDepth)", at: offset)
        }
        let node = pendingNode
        if frames.isEmpty { rootKind = object ? .object : .array }
        var captured = false
        if node >= 0 {
            captured = startCaptures(node: node, object: object, at: offset)
        }
        if captured { emitting += 1 }
        if emitting > 0 { text.append(object ? UInt8(ascii: "{") : UInt8(ascii: "[")) }
        let ownKeyNode: Int32 = object && node >= 0 && plan.nodes[Int(node)].keysEnd > plan.nodes[Int(node)].keysStart ? node : -1
        frames.append(Frame(isArray: !object, captured: captured, keyNode: ownKeyNode, valueNode: node))
        keyNode = ownKeyNode
        inArray = !object
        pendingNode = -1
        state = object ? .keyOrObjectEnd : .valueOrArrayEnd
    }

    /// Closes the innermost container; true when it was the record.
    private mutating func close(closer: UInt8) -> Bool {
        let frame = frames.removeLast()
        if emitting > 0 { text.append(closer) }
        if frame.captured {
            endCaptures(node: frame.valueNode)
            emitting -= 1
        }
        if let outer = frames.last {
            keyNode = outer.keyNode
            inArray = outer.isArray
        }
        return afterValue()
    }

    /// Moves on after a value; true when it was the record.
    @inline(__always)
    private mutating func afterValue() -> Bool {
        if frames.isEmpty { return true }
        state = inArray ? .afterElement : .afterMember
        pendingNode = -1
        return false
    }

    /// Matches a key in the innermost object: the node its value belongs to,
    /// whose slots start over (a later duplicate key wins).
    private mutating func takeKey(_ buffer: UnsafeRawBufferPointer, from token: Int, _ scanned: ScannedString) {
        if keyNode >= 0 {
            if let decoded = scanned.decodedStart {
                pendingNode = strings.withUnsafeBytes { decodedBytes in
                    child(of: keyNode, key: UnsafeRawBufferPointer(rebasing: decodedBytes[decoded...]))
                }
            } else {
                pendingNode = child(of: keyNode, key: UnsafeRawBufferPointer(rebasing: buffer[(token + 1)..<(scanned.end - 1)]))
            }
            if pendingNode >= 0 {
                let node = plan.nodes[Int(pendingNode)]
                for index in node.subtreeStart..<node.subtreeEnd {
                    slots[Int(plan.subtreeSlots[Int(index)])].tag = .missing
                }
            }
        }
        if emitting > 0 { emitString(buffer, from: token, scanned) }
        if let decoded = scanned.decodedStart { strings.removeSubrange(decoded...) }
    }

    /// The child of `node` reached by `key`, or -1.
    private func child(of node: Int32, key: UnsafeRawBufferPointer) -> Int32 {
        let count = key.count
        let owner = plan.nodes[Int(node)]
        var prefix: UInt64 = 0
        var prefixDone = false
        for index in Int(owner.keysStart)..<Int(owner.keysEnd) {
            let candidate = plan.keys[index]
            guard candidate.count == count else { continue }
            if !prefixDone {
                prefix = Self.prefix(of: key)
                prefixDone = true
            }
            guard candidate.prefix == prefix else { continue }
            if count <= 8 { return candidate.node }
            var same = true
            for offset in 8..<count where plan.keyBytes[candidate.offset + offset] != key[offset] {
                same = false
                break
            }
            if same { return candidate.node }
        }
        return -1
    }

    /// The first (up to) 8 bytes of `key`, little-endian, zero-padded.
    @inline(__always)
    private static func prefix(of key: UnsafeRawBufferPointer) -> UInt64 {
        let count = min(key.count, 8)
        var prefix: UInt64 = 0
        for index in 0..<count {
            prefix |= UInt64(key[index]) << (8 * UInt64(index))
        }
        return prefix
    }

    // MARK: - Output

    /// Moves every value still pointing into the input into `strings`: call
    /// before the input buffer goes away in the middle of a record.
    mutating func pin() {
        for index in slots.indices where slots[index].place == .input {
            switch slots[index].tag {
            case .string, .json, .mismatch:
                let start = strings.count
                if let address = UnsafeRawPointer(bitPattern: slots[index].start) {
                    strings.append(contentsOf: UnsafeRawBufferPointer(start: address, count: slots[index].count))
                }
                slots[index].place = .strings
                slots[index].start = start
            case .missing, .null, .integer, .double, .boolean:
                break
            }
        }
    }
}

/// What a slot holds for the current record.
///
/// Bytes are in the record's `strings` or `text`, or still in the input
/// (`start` is then their address, valid only until the input buffer goes
/// away, which `RecordProjector.pin` is called before; so a slot never holds
/// an address between two calls of the reader, and may cross threads).
struct FieldSlot: Sendable {
    enum Tag: UInt8, Sendable { case missing, null, integer, double, boolean, string, json, mismatch }
    enum Place: UInt8, Sendable { case input, strings, text }

    var tag = Tag.missing
    var place = Place.input
    /// For a mismatch: what was found.
    var found = JSONValueKind.null
    /// An integer's or a double's bits, or a boolean (0 or 1).
    var scalar: UInt64 = 0
    /// Where the bytes start: an address in the input, or an offset in `strings` or `text`.
    var start = 0
    /// How many bytes; -1 while a captured container is still open.
    var count = 0
    /// For a mismatch: where the value starts.
    var position = JSONPosition(byteOffset: 0, line: 0, column: 0)

    /// The value, its bytes in the record's `strings` or `text`, or in the input.
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

    private func bytes(strings: UnsafeRawBufferPointer, text: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        switch place {
        case .input: UnsafeRawBufferPointer(start: UnsafeRawPointer(bitPattern: start), count: count)
        case .strings: UnsafeRawBufferPointer(rebasing: strings[start..<(start + count)])
        case .text: UnsafeRawBufferPointer(rebasing: text[start..<(start + count)])
        }
    }
}
