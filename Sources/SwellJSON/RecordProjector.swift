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
        var keyNode: Int
        /// The node the container is the value of (-1: none).
        var valueNode: Int
    }

    let plan: ProjectionPlan
    let ndjson: Bool
    let maxDepth: Int

    /// The arrays and objects open around the record in the page.
    var baseDepth = 0
    var state = State.value
    var frames: [Frame] = []
    /// `frames.last?.keyNode`: the node the innermost object's keys are matched against (-1: none).
    var keyNode = -1
    /// Whether the innermost container is an array.
    var inArray = false
    /// The node the next value belongs to (-1: none).
    var pendingNode = -1
    /// How many captured containers are open: while any is, every token is also written to `text`.
    var emitting = 0

    /// One slot per field of the plan (then the record's excerpt), and the key guesses.
    private(set) var table: SlotTable
    /// The slots of `table`, written only after `makeTableUnique`.
    var slots: UnsafeMutablePointer<FieldSlot> { table.slots }
    /// Decoded strings of this record (and values moved out of the input by `pin`).
    var strings: [UInt8] = []
    /// Compact JSON text of this record's captured values.
    var text: [UInt8] = []
    /// The current 1-based line and the offset of its first byte.
    var line = 1
    var lineStart = 0
    /// What the record's root is.
    var rootKind = JSONValueKind.object

    init(plan: ProjectionPlan, ndjson: Bool, maxDepth: Int) {
        self.plan = plan
        self.ndjson = ndjson
        self.maxDepth = maxDepth
        table = SlotTable(plan: plan)
    }

    /// Copies the table if another projector (a copy of this one) shares it.
    mutating func makeTableUnique() {
        if !isKnownUniquelyReferenced(&table) {
            table = SlotTable(copying: table)
        }
    }

    /// Lends the slots, for reading, to `body`.
    func withSlots<Result>(_ body: (UnsafeBufferPointer<FieldSlot>) throws -> Result) rethrows -> Result {
        try withExtendedLifetime(table) {
            try body(UnsafeBufferPointer(start: table.slots, count: table.slotCount))
        }
    }

    /// Starts a record at the current byte, `depth` containers deep in the page.
    mutating func begin(line: Int, lineStart: Int, depth: Int) {
        self.line = line
        self.lineStart = lineStart
        baseDepth = depth
        state = .value
        keyNode = -1
        inArray = false
        pendingNode = 0
        emitting = 0
        makeTableUnique()
        for index in 0..<table.slotCount {
            slots[index].tag = .missing
        }
        if !frames.isEmpty { frames.removeAll(keepingCapacity: true) }
        if !strings.isEmpty { strings.removeAll(keepingCapacity: true) }
        if !text.isEmpty { text.removeAll(keepingCapacity: true) }
    }

    /// Parses from `position` until the record ends (true, `position` after
    /// it) or the buffer ends (false, `position` at the first byte of an
    /// unfinished token, or at the end).
    ///
    /// `base` is the page offset of `buffer[0]`. With `isFinal`, the end of the
    /// buffer is the end of the page: an unfinished token is an error.
    ///
    /// Object members are read by a loop of their own (key, colon, scalar,
    /// comma) while they come without whitespace; anything else goes back to
    /// the state machine.
    mutating func step(
        _ buffer: UnsafeRawBufferPointer, _ position: inout Int, base: Int, isFinal: Bool
    ) throws(JSONError) -> Bool {
        makeTableUnique()
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
                if byte == UInt8(ascii: "{") || byte == UInt8(ascii: "[") {
                    try open(object: byte == UInt8(ascii: "{"), at: base + index)
                    index += 1
                    continue
                }
                guard try scalar(byte, buffer, &index, base: base, isFinal: isFinal) else {
                    position = index
                    return false
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
                guard try members(buffer, &index, base: base, isFinal: isFinal) else {
                    position = index
                    return false
                }
            case .colon:
                guard byte == UInt8(ascii: ":") else { throw unexpected(byte, at: base + index) }
                if emitting > 0 { emit(byte) }
                index += 1
                state = .value
            case .afterElement:
                if byte == UInt8(ascii: ",") {
                    if emitting > 0 { emit(byte) }
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
                    if emitting > 0 { emit(byte) }
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

    /// Reads object members from the key whose opening quote is at `index`,
    /// one after another, while each is a key, a colon and a scalar without
    /// whitespace: the common case, kept out of the state machine's loop.
    /// Returns true where the state machine takes over again (`state` says
    /// what comes next), false when the buffer ends inside a token (`index`
    /// at its first byte).
    private mutating func members(
        _ buffer: UnsafeRawBufferPointer, _ index: inout Int, base: Int, isFinal: Bool
    ) throws(JSONError) -> Bool {
        let end = buffer.count
        while true {
            // The key that came after the last one matched in this node's objects, expected again.
            if keyNode >= 0, case let guess = table.guesses[keyNode], let close = rawMatch(buffer, from: index, key: guess) {
                take(key: guess)
                if emitting > 0 { emit(UnsafeRawBufferPointer(rebasing: buffer[index...close])) }
                index = close &+ 1
            } else if keyNode >= 0, let next = takeAnyRawKey(buffer, from: index) {
                index = next
            } else {
                // Any other key: one without escapes matches nothing (every key of the node was tried above).
                var highBits: UInt64 = 0
                let close = JSONScanner.special(buffer, from: index &+ 1, highBits: &highBits)
                if close < end, buffer[close] == UInt8(ascii: "\"") {
                    if highBits & 0x8080_8080_8080_8080 != 0 {
                        try scanner.validateUTF8(UnsafeRawBufferPointer(rebasing: buffer[(index &+ 1)..<close]), base: base &+ index &+ 1)
                    }
                    if emitting > 0 { emit(UnsafeRawBufferPointer(rebasing: buffer[index...close])) }
                    index = close &+ 1
                } else {
                    guard let next = try readKey(buffer, from: index, base: base, isFinal: isFinal) else { return false }
                    index = next
                }
            }
            state = .colon
            guard index &+ 1 < end, buffer[index] == UInt8(ascii: ":") else { return true }
            if emitting > 0 { emit(UInt8(ascii: ":")) }
            index &+= 1
            state = .value
            let first = buffer[index]
            if first == UInt8(ascii: "\"") {
                // A string without escapes is read here; any other goes to `scanString`.
                var highBits: UInt64 = 0
                let close = JSONScanner.special(buffer, from: index &+ 1, highBits: &highBits)
                let scanned: ScannedString
                if close < end, buffer[close] == UInt8(ascii: "\"") {
                    if highBits & 0x8080_8080_8080_8080 != 0 {
                        try scanner.validateUTF8(UnsafeRawBufferPointer(rebasing: buffer[(index &+ 1)..<close]), base: base &+ index &+ 1)
                    }
                    scanned = ScannedString(end: close &+ 1, decodedStart: nil)
                } else {
                    guard let found = try scanString(buffer, from: index, base: base) else {
                        if isFinal { throw error("unterminated string", at: base + index) }
                        return false
                    }
                    scanned = found
                }
                take(string: scanned, buffer, from: index, base: base)
                index = scanned.end
            } else if let (next, value) = Self.plainInteger(buffer, from: index) {
                take(integer: value, buffer, from: index, to: next, base: base)
                index = next
            } else {
                guard Self.startsScalar(first) else { return true }
                guard try scalar(first, buffer, &index, base: base, isFinal: isFinal) else { return false }
            }
            state = .afterMember
            pendingNode = -1
            guard index &+ 1 < end, buffer[index] == UInt8(ascii: ","), buffer[index &+ 1] == UInt8(ascii: "\"") else { return true }
            if emitting > 0 { emit(UInt8(ascii: ",")) }
            index &+= 1
            state = .key
        }
    }

    /// Gives a string value to the slots of `pendingNode`, if any.
    @inline(__always)
    private mutating func take(string scanned: ScannedString, _ buffer: UnsafeRawBufferPointer, from token: Int, base: Int) {
        if pendingNode >= 0 || emitting > 0 {
            // The common case first: one text field, a string without escapes, nothing captured.
            if emitting == 0, scanned.decodedStart == nil, case let slot = plan.nodes[pendingNode].soleTextSlot, slot >= 0 {
                slots[slot].setBytes(.string, .input, start: Int(bitPattern: buffer.baseAddress) &+ token &+ 1, count: scanned.end &- token &- 2)
            } else {
                takeString(buffer, from: token, scanned, base: base)
            }
        } else if let decoded = scanned.decodedStart {
            dropDecoded(from: decoded)
        }
    }

    /// Gives an integer read by `plainInteger` to the slots of `pendingNode`, if any.
    @inline(__always)
    private mutating func take(integer value: Int64, _ buffer: UnsafeRawBufferPointer, from token: Int, to end: Int, base: Int) {
        guard pendingNode >= 0 || emitting > 0 else { return }
        if emitting == 0, case let slot = plan.nodes[pendingNode].soleIntegerSlot, slot >= 0 {
            slots[slot].setScalar(.integer, UInt64(bitPattern: value))
        } else {
            takeNumber(buffer, from: token, to: end, base: base, integer: value)
        }
    }

    /// Whether `byte` starts a string, number or literal.
    @inline(__always)
    private static func startsScalar(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "-") || byte &- UInt8(ascii: "0") < 10
            || byte == UInt8(ascii: "t") || byte == UInt8(ascii: "f") || byte == UInt8(ascii: "n")
    }

    /// The common number, read in one pass: an integer of 1 to 18 digits
    /// (no leading zero) with what follows it in the buffer, which is neither
    /// a fraction nor an exponent. Nil for anything else, left to `scanNumber`.
    @inline(__always)
    private static func plainInteger(_ buffer: UnsafeRawBufferPointer, from start: Int) -> (end: Int, value: Int64)? {
        let end = buffer.count
        let negative = buffer[start] == UInt8(ascii: "-")
        let first = negative ? start &+ 1 : start
        var index = first
        var value: Int64 = 0
        while index < end {
            let digit = buffer[index] &- UInt8(ascii: "0")
            guard digit < 10 else { break }
            value = value &* 10 &+ Int64(digit)
            index &+= 1
        }
        let digits = index &- first
        guard index < end, digits > 0, digits <= 18, digits == 1 || buffer[first] != UInt8(ascii: "0") else { return nil }
        let next = buffer[index]
        guard next != UInt8(ascii: "."), next | 0x20 != UInt8(ascii: "e") else { return nil }
        return (index, negative ? -value : value)
    }

    /// Reads the string, number or literal starting with `byte` at `index`
    /// into the slots of `pendingNode`; false when the buffer ends inside it
    /// (and not `isFinal`), `index` then unchanged.
    @inline(__always)
    private mutating func scalar(
        _ byte: UInt8, _ buffer: UnsafeRawBufferPointer, _ index: inout Int, base: Int, isFinal: Bool
    ) throws(JSONError) -> Bool {
        switch byte {
        case UInt8(ascii: "\""):
            guard let scanned = try scanString(buffer, from: index, base: base) else {
                if isFinal { throw error("unterminated string", at: base + index) }
                return false
            }
            take(string: scanned, buffer, from: index, base: base)
            index = scanned.end
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            if let (next, value) = Self.plainInteger(buffer, from: index) {
                take(integer: value, buffer, from: index, to: next, base: base)
                index = next
                return true
            }
            guard let next = try scanNumber(buffer, from: index, base: base, isFinal: isFinal) else { return false }
            if pendingNode >= 0 || emitting > 0 {
                takeNumber(buffer, from: index, to: next, base: base, integer: nil)
            }
            index = next
        case UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"):
            let literal: StaticString = switch byte {
            case UInt8(ascii: "t"): "true"
            case UInt8(ascii: "f"): "false"
            default: "null"
            }
            guard try scanLiteral(literal, buffer, from: index, base: base, isFinal: isFinal) else { return false }
            let next = index + literal.utf8CodeUnitCount
            if pendingNode >= 0 || emitting > 0 {
                takeLiteral(buffer, from: index, to: next, base: base)
            }
            index = next
        default:
            throw unexpected(byte, at: base + index)
        }
        return true
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
        if node >= 0, object ? plan.nodes[node].capturesObjects : plan.nodes[node].capturesArrays {
            captured = startCaptures(node: node, object: object, at: offset)
        }
        if captured { emitting += 1 }
        if emitting > 0 { text.append(object ? UInt8(ascii: "{") : UInt8(ascii: "[")) }
        let ownKeyNode = object && node >= 0 && plan.nodes[node].keysEnd > plan.nodes[node].keysStart ? node : -1
        frames.append(Frame(isArray: !object, captured: captured, keyNode: ownKeyNode, valueNode: node))
        keyNode = ownKeyNode
        inArray = !object
        pendingNode = -1
        state = object ? .keyOrObjectEnd : .valueOrArrayEnd
    }

    /// Closes the innermost container; true when it was the record.
    private mutating func close(closer: UInt8) -> Bool {
        let frame = frames.removeLast()
        if emitting > 0 { emit(closer) }
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
}
