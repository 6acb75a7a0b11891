extension RecordProjector {
    /// Gives a string value to the slots of `pendingNode`, and to `text` when capturing.
    mutating func takeString(_ buffer: UnsafeRawBufferPointer, from token: Int, _ scanned: ScannedString, base: Int) {
        var keepDecoded = false
        // Where the string's compact text is in `text` (written once, for the capture and for `.json` slots).
        var written: (start: Int, count: Int)?
        if emitting > 0 {
            written = emitString(buffer, from: token, scanned)
        }
        if pendingNode >= 0 {
            if frames.isEmpty { rootKind = .string }
            let node = plan.nodes[pendingNode]
            for index in node.slotsStart..<node.slotsEnd {
                let slot = plan.nodeSlots[index]
                switch plan.slotKinds[slot] {
                case .string, .text:
                    if let decoded = scanned.decodedStart {
                        slots[slot].setBytes(.string, .strings, start: decoded, count: strings.count - decoded)
                        keepDecoded = true
                    } else {
                        slots[slot].setBytes(.string, .input, start: address(buffer, token + 1), count: scanned.end - token - 2)
                    }
                case .json:
                    if scanned.decodedStart != nil {
                        let text = written ?? emitString(buffer, from: token, scanned)
                        written = text
                        slots[slot].setBytes(.json, .text, start: text.start, count: text.count)
                    } else {
                        slots[slot].setBytes(.json, .input, start: address(buffer, token), count: scanned.end - token)
                    }
                case .integer, .double, .boolean, .recordExcerpt:
                    setMismatch(slot, found: .string, buffer, from: token, to: scanned.end, base: base)
                }
            }
        }
        if !keepDecoded, let decoded = scanned.decodedStart {
            strings.removeSubrange(decoded...)
        }
    }

    /// Gives a number to the slots of `pendingNode`, and to `text` when capturing;
    /// `integer` is its value when already read.
    mutating func takeNumber(_ buffer: UnsafeRawBufferPointer, from token: Int, to end: Int, base: Int, integer: Int64?) {
        let bytes = UnsafeRawBufferPointer(rebasing: buffer[token..<end])
        if emitting > 0 { text.append(contentsOf: bytes) }
        guard pendingNode >= 0 else { return }
        if frames.isEmpty { rootKind = .number }
        let node = plan.nodes[pendingNode]
        for index in node.slotsStart..<node.slotsEnd {
            let slot = plan.nodeSlots[index]
            switch plan.slotKinds[slot] {
            case .integer:
                if let value = integer ?? JSONNumber.int64(bytes) {
                    slots[slot].setScalar(.integer, UInt64(bitPattern: value))
                } else {
                    setMismatch(slot, found: .number, buffer, from: token, to: end, base: base)
                }
            case .double:
                if let value = JSONNumber.double(bytes) {
                    slots[slot].setScalar(.double, value.bitPattern)
                } else {
                    setMismatch(slot, found: .number, buffer, from: token, to: end, base: base)
                }
            case .text:
                slots[slot].setBytes(.string, .input, start: address(buffer, token), count: end - token)
            case .json:
                slots[slot].setBytes(.json, .input, start: address(buffer, token), count: end - token)
            case .boolean, .string, .recordExcerpt:
                setMismatch(slot, found: .number, buffer, from: token, to: end, base: base)
            }
        }
    }

    /// Gives `true`, `false` or `null` to the slots of `pendingNode`, and to `text` when capturing.
    mutating func takeLiteral(_ buffer: UnsafeRawBufferPointer, from token: Int, to end: Int, base: Int) {
        if emitting > 0 { text.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[token..<end])) }
        guard pendingNode >= 0 else { return }
        let first = buffer[token]
        let found: JSONValueKind = first == UInt8(ascii: "n") ? .null : .boolean
        if frames.isEmpty { rootKind = found }
        let node = plan.nodes[pendingNode]
        for index in node.slotsStart..<node.slotsEnd {
            let slot = plan.nodeSlots[index]
            let kind = plan.slotKinds[slot]
            if found == .null, kind != .recordExcerpt {
                slots[slot].setScalar(.null, 0)
                continue
            }
            switch kind {
            case .boolean:
                slots[slot].setScalar(.boolean, first == UInt8(ascii: "t") ? 1 : 0)
            case .text:
                slots[slot].setBytes(.string, .input, start: address(buffer, token), count: end - token)
            case .json:
                slots[slot].setBytes(.json, .input, start: address(buffer, token), count: end - token)
            case .integer, .double, .string, .recordExcerpt:
                setMismatch(slot, found: found, buffer, from: token, to: end, base: base)
            }
        }
    }

    /// Starts capturing an array or object for the slots of `node` that keep
    /// its text (`.json`, and mismatches for their excerpt); true when any does.
    mutating func startCaptures(node: Int, object: Bool, at offset: Int) -> Bool {
        let found: JSONValueKind = object ? .object : .array
        let position = JSONPosition(byteOffset: offset, line: line, column: max(1, offset - lineStart + 1))
        var captured = false
        let owner = plan.nodes[node]
        for index in owner.slotsStart..<owner.slotsEnd {
            let slot = plan.nodeSlots[index]
            switch plan.slotKinds[slot] {
            case .json:
                slots[slot].setBytes(.json, .text, start: text.count, count: -1)
            case .recordExcerpt where object:
                continue
            case .integer, .double, .boolean, .string, .text, .recordExcerpt:
                slots[slot].setBytes(.mismatch, .text, start: text.count, count: -1)
                slots[slot].found = found
                slots[slot].position = position
            }
            captured = true
        }
        return captured
    }

    /// Ends the captures that `startCaptures` began for `node`: their text is complete.
    mutating func endCaptures(node: Int) {
        let owner = plan.nodes[node]
        for index in owner.slotsStart..<owner.slotsEnd {
            let slot = plan.nodeSlots[index]
            if slots[slot].place == .text, slots[slot].count < 0 {
                slots[slot].count = text.count - slots[slot].start
            }
        }
    }

    /// Writes a string token's compact text to `text` (as `JSONValue.jsonText`
    /// writes it); returns where.
    @discardableResult
    mutating func emitString(_ buffer: UnsafeRawBufferPointer, from token: Int, _ scanned: ScannedString) -> (start: Int, count: Int) {
        let start = text.count
        if let decoded = scanned.decodedStart {
            text.append(UInt8(ascii: "\""))
            for index in decoded..<strings.count {
                let byte = strings[index]
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                    text.append(UInt8(ascii: "\\"))
                    text.append(byte)
                case 0x0A: text.append(UInt8(ascii: "\\")); text.append(UInt8(ascii: "n"))
                case 0x0D: text.append(UInt8(ascii: "\\")); text.append(UInt8(ascii: "r"))
                case 0x09: text.append(UInt8(ascii: "\\")); text.append(UInt8(ascii: "t"))
                case 0x08: text.append(UInt8(ascii: "\\")); text.append(UInt8(ascii: "b"))
                case 0x0C: text.append(UInt8(ascii: "\\")); text.append(UInt8(ascii: "f"))
                case 0x00..<0x20:
                    let hex: StaticString = "0123456789abcdef"
                    text.append(UInt8(ascii: "\\"))
                    text.append(UInt8(ascii: "u"))
                    text.append(UInt8(ascii: "0"))
                    text.append(UInt8(ascii: "0"))
                    text.append(hex.utf8Start[Int(byte >> 4)])
                    text.append(hex.utf8Start[Int(byte & 0x0F)])
                default:
                    text.append(byte)
                }
            }
            text.append(UInt8(ascii: "\""))
        } else {
            // Without escapes the token is its own compact text.
            text.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[token..<scanned.end]))
        }
        return (start, text.count - start)
    }

    /// A mismatch whose excerpt is the value's token in the input (cut to what an excerpt shows).
    private mutating func setMismatch(
        _ slot: Int, found: JSONValueKind, _ buffer: UnsafeRawBufferPointer, from token: Int, to end: Int, base: Int
    ) {
        let offset = base + token
        slots[slot].setBytes(.mismatch, .input, start: address(buffer, token), count: min(end - token, JSONFieldMismatch.excerptLimit + 1))
        slots[slot].found = found
        slots[slot].position = JSONPosition(byteOffset: offset, line: line, column: max(1, offset - lineStart + 1))
    }

    @inline(__always)
    private func address(_ buffer: UnsafeRawBufferPointer, _ index: Int) -> Int {
        Int(bitPattern: buffer.baseAddress) + index
    }
}

extension FieldSlot {
    @inline(__always)
    mutating func setBytes(_ tag: Tag, _ place: Place, start: Int, count: Int) {
        self.tag = tag
        self.place = place
        self.start = start
        self.count = count
    }

    @inline(__always)
    mutating func setScalar(_ tag: Tag, _ scalar: UInt64) {
        self.tag = tag
        self.scalar = scalar
    }
}
