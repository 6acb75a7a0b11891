/// The machine's structure (opening and closing arrays and objects, where a finished value
/// goes, what a stray byte meant) and its scalars (numbers, literals, strings), which `step`
/// calls token by token.
extension JSONMachine {
    // MARK: - Structure

    mutating func newline(at offset: Int) throws(JSONError) {
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
    func elementSlot() -> Slot {
        switch frames.last?.kind {
        case .array: .element
        case .records: .emit
        default: .skip
        }
    }

    /// Records a key read in the innermost object and decides where its value goes.
    mutating func takeKey(_ key: String) {
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

    func navSlot(for path: [String]) -> Slot {
        if let recordsPath, recordsPath.starts(with: path) {
            return path.count == recordsPath.count ? .records : .nav
        }
        if let index = capturePaths.firstIndex(of: path) { return .capture(index) }
        if capturePaths.contains(where: { $0.starts(with: path) }) { return .nav }
        return .skip
    }

    mutating func open(object: Bool, at offset: Int) throws(JSONError) {
        guard frames.count + baseDepth < maxDepth else {
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
    mutating func close(at offset: Int) throws(JSONError) -> JSONValue? {
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
    static func popSuffix<Element>(of stack: inout [Element], from start: Int) -> [Element] {
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
    mutating func complete(_ value: consuming JSONValue, at offset: Int) throws(JSONError) -> JSONValue? {
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

    mutating func afterValue() {
        if let top = frames.last {
            state = top.kind.isArray ? .afterElement : .afterMember
        } else {
            state = mode == .ndjson ? .lineEnd : .end
        }
    }


    func notAnArray(_ found: String, at offset: Int) -> JSONError {
        if recordsPath == nil {
            return error("the page is \(found), not an array of records", at: offset)
        }
        return error("'\(recordsPathText)' is \(found), not an array of records", at: offset)
    }

    /// The error for an unexpected byte, worded by what the parser expected there.
    func unexpected(_ byte: UInt8, at offset: Int) -> JSONError {
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
    var scanner: JSONScanner { JSONScanner(line: line, lineStart: lineStart) }

    /// Scans a number starting at `start`; returns the index after it, or nil when
    /// the buffer ends where the number could go on (and not `isFinal`).
    func scanNumber(
        _ buffer: UnsafeRawBufferPointer, from start: Int, base: Int, isFinal: Bool
    ) throws(JSONError) -> Int? {
        try scanner.number(buffer, from: start, base: base, isFinal: isFinal)
    }

    /// Checks `true`, `false` or `null` at `start`; false when the buffer ends inside it (and not `isFinal`).
    func scanLiteral(
        _ literal: StaticString, _ buffer: UnsafeRawBufferPointer, from start: Int, base: Int, isFinal: Bool
    ) throws(JSONError) -> Bool {
        try scanner.literal(literal, buffer, from: start, base: base, isFinal: isFinal)
    }

    /// Scans a string whose opening quote is at `start`; returns it and the index
    /// after its closing quote, or nil when the buffer ends inside it.
    mutating func scanString(
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
