/// What the projector writes outside the slots: captured text, decoded
/// strings, and values moved out of an input buffer that goes away.
extension RecordProjector {
    /// Appends to the captured text (kept out of line: the hot paths only test `emitting`).
    @inline(never)
    mutating func emit(_ byte: UInt8) {
        text.append(byte)
    }

    @inline(never)
    mutating func emit(_ bytes: UnsafeRawBufferPointer) {
        text.append(contentsOf: bytes)
    }

    /// Drops the decoded bytes of a string that no slot took.
    @inline(never)
    mutating func dropDecoded(from start: Int) {
        strings.removeSubrange(start...)
    }

    /// Moves every value still pointing into the input into `strings`: call
    /// before the input buffer goes away in the middle of a record.
    mutating func pin() {
        makeTableUnique()
        for index in 0..<table.slotCount where slots[index].place == .input {
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
