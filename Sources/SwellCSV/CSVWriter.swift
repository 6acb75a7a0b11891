/// RFC 4180 writer: comma separated; a field is quoted when it holds a comma, a double quote, CR or LF, with inner quotes doubled; LF line ends
/// (the last line too); UTF-8 without BOM; null and "" are both an empty field; header names follow the same quoting rule; tabs/spaces alone do not cause quotes.
///
/// Rows are collected in a buffer of `bufferSize` bytes that goes to the output in one `write`
/// whenever it is full (a field larger than the buffer is written on its own). Rows are written as
/// given: the writer does not check that they have the header's width. Use from one thread at a time.
public final class CSVWriter {
    private let output: any CSVOutput
    private let escapeFormulas: Bool
    private let buffer: UnsafeMutablePointer<UInt8>
    private let capacity: Int
    private var count = 0

    /// Data rows written so far, not counting the header.
    public private(set) var rowsWritten = 0

    /// Creates a writer into `output`.
    ///
    /// - Parameters:
    ///   - escapeFormulas: a .text cell starting with = + - @ gets a leading ' (OWASP CSV injection), before quoting.
    ///     `.value` cells and header names are never escaped.
    ///   - bufferSize: bytes collected before each `output.write` (at least 64).
    public init(output: any CSVOutput, escapeFormulas: Bool = false, bufferSize: Int = 256 * 1024) {
        self.output = output
        self.escapeFormulas = escapeFormulas
        self.capacity = max(bufferSize, 64)
        self.buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
    }

    deinit {
        buffer.deallocate()
    }

    /// Writes the header row: the column names, quoted by the same rule as fields, never formula-escaped.
    ///
    /// - Throws: `CSVError` from the output when a full buffer cannot be written.
    public func writeHeader(_ names: [String]) throws(CSVError) {
        for (index, name) in names.enumerated() {
            if index > 0 { try appendByte(ASCII.comma) }
            try appendField(name, escape: false)
        }
        try appendByte(ASCII.lineFeed)
    }

    /// Writes one data row.
    ///
    /// - Throws: `CSVError` from the output when a full buffer cannot be written.
    public func writeRow(_ cells: [CSVCell]) throws(CSVError) {
        for (index, cell) in cells.enumerated() {
            if index > 0 { try appendByte(ASCII.comma) }
            switch cell {
            case .null:
                break
            case .text(let text):
                try appendField(text, escape: escapeFormulas)
            case .value(let value):
                try appendField(value, escape: false)
            }
        }
        try appendByte(ASCII.lineFeed)
        rowsWritten += 1
    }

    // MARK: Field by field

    /// Fields written in the current row (field-by-field writing).
    private var fieldsInRow = 0

    /// Writes a text field from its UTF-8 bytes (formula escaping applies, as for `.text`),
    /// without a `String`: for callers that read values in place (the store's column bytes).
    /// End the row with `endRow()`.
    public func writeTextField(_ bytes: UnsafeBufferPointer<UInt8>) throws(CSVError) {
        try separateField()
        try appendField(bytes, escape: escapeFormulas)
    }

    /// Writes an already formatted value's UTF-8 bytes (never escaped, as for `.value`).
    public func writeValueField(_ bytes: UnsafeBufferPointer<UInt8>) throws(CSVError) {
        try separateField()
        try appendField(bytes, escape: false)
    }

    /// Writes an already formatted value (never escaped, as for `.value`).
    public func writeValueField(_ value: String) throws(CSVError) {
        try separateField()
        try appendField(value, escape: false)
    }

    /// Writes an integer's decimal digits (`CSVFormat.integer`), straight into the buffer.
    public func writeIntegerField(_ value: Int64) throws(CSVError) {
        try separateField()
        try reserve(20)
        var magnitude = value.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // room for 20 digits, filled from the end
        let length: Int = withUnsafeMutableBytes(of: &digits) { raw in
            var position = raw.count
            repeat {
                position -= 1
                raw[position] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            if value < 0 {
                position -= 1
                raw[position] = UInt8(ascii: "-")
            }
            let length = raw.count - position
            (buffer + count).update(from: raw.baseAddress!.assumingMemoryBound(to: UInt8.self) + position, count: length)
            return length
        }
        count += length
    }

    /// Writes an empty field (no value).
    public func writeNullField() throws(CSVError) {
        try separateField()
    }

    /// Ends a row written field by field.
    public func endRow() throws(CSVError) {
        try appendByte(ASCII.lineFeed)
        fieldsInRow = 0
        rowsWritten += 1
    }

    private func separateField() throws(CSVError) {
        if fieldsInRow > 0 { try appendByte(ASCII.comma) }
        fieldsInRow += 1
    }

    /// Makes room for `bytes` more bytes in the buffer (at most `capacity`).
    private func reserve(_ bytes: Int) throws(CSVError) {
        if bytes > capacity - count { try flush() }
    }

    /// Writes what is buffered, then completes the output (`output.finish()`: fsync and rename).
    ///
    /// - Throws: `CSVError` from the output; the target is then left as it was.
    public func finish() throws(CSVError) {
        try flush()
        try output.finish()
    }

    private func flush() throws(CSVError) {
        guard count > 0 else { return }
        try output.write(UnsafeRawBufferPointer(start: buffer, count: count))
        count = 0
    }

    private func appendByte(_ byte: UInt8) throws(CSVError) {
        if count == capacity {
            try flush()
        }
        buffer[count] = byte
        count += 1
    }

    private func appendField(_ text: String, escape: Bool) throws(CSVError) {
        var text = text
        let plan = text.withUTF8 { FieldPlan(scanning: $0, escapeFormulas: escape) }
        guard plan.length > 0 else { return }
        if plan.length > capacity - count {
            try flush()
        }
        if plan.length <= capacity {
            text.withUTF8 { plan.encode($0, into: buffer + count) }
            count += plan.length
        } else {
            try writeLarge(plan) { plan, target in text.withUTF8 { plan.encode($0, into: target) } }
        }
    }

    /// A field larger than the buffer goes to the output on its own.
    private func writeLarge(_ plan: FieldPlan, _ encode: (FieldPlan, UnsafeMutablePointer<UInt8>) -> Void) throws(CSVError) {
        let large = UnsafeMutablePointer<UInt8>.allocate(capacity: plan.length)
        defer { large.deallocate() }
        encode(plan, large)
        try output.write(UnsafeRawBufferPointer(start: large, count: plan.length))
    }

    private func appendField(_ bytes: UnsafeBufferPointer<UInt8>, escape: Bool) throws(CSVError) {
        let plan = FieldPlan(scanning: bytes, escapeFormulas: escape)
        guard plan.length > 0 else { return }
        if plan.length > capacity - count {
            try flush()
        }
        if plan.length <= capacity {
            plan.encode(bytes, into: buffer + count)
            count += plan.length
        } else {
            try writeLarge(plan) { plan, target in plan.encode(bytes, into: target) }
        }
    }
}

@available(*, unavailable)
extension CSVWriter: Sendable {}
