/// The non-generic engine of `JSONProjectionReader`: it walks the page with a
/// `JSONMachine` (page structure, records path, captures) that stops at each
/// record's first byte, reads each record with a `RecordProjector`, and
/// carries a token cut by a chunk's end into the next chunk.
///
/// `JSONProjectionReader` drives it record by record: `beginChunk`, then
/// `nextRecord` until false (after each true, the record's values are ready
/// for `withRecord`), then `endChunk`; `beginFinish` … `endFinish` for the
/// page's end.
@usableFromInline
struct ProjectingParser: Sendable {
    private enum Phase: Sendable {
        /// Parsing the carried token (`running`), then the chunk.
        case carry
        /// Parsing the chunk from `chunkPosition`.
        case chunk
        /// Nothing more in this chunk.
        case done
    }

    private var machine: JSONMachine
    private var projector: RecordProjector
    /// `JSONProjection.wholeRecords`: the machine that builds each record (document mode, or
    /// NDJSON's for a line; restarted at each record, its stacks kept), in place of the projector.
    private var builder: JSONMachine?
    /// The record `builder` built, until the next record starts.
    @usableFromInline private(set) var builtRecord: JSONValue?
    /// Whether the projector is inside a record.
    private var inRecord = false
    private var carry = CarriedToken()
    /// The carried token being parsed, taken from `carry`; its page offset and how far it is read.
    private var running: [UInt8] = []
    private var runningBase = 0
    private var runningPosition = 0
    private var phase = Phase.done
    private var chunkPosition = 0
    /// Whether the token being parsed is the page's last (`finish`).
    private var isFinal = false
    private var fedCount = 0
    private var failed = false
    private var finished = false

    /// Records completed so far.
    @usableFromInline private(set) var recordCount = 0
    /// Where the current (or last) record starts.
    @usableFromInline private(set) var recordStart = JSONPosition(byteOffset: 0, line: 1, column: 1)
    /// The page offset one past the last completed record's last byte.
    @usableFromInline private(set) var recordEnd = 0

    /// Bytes fed so far.
    var fedByteCount: Int { fedCount }

    /// Where the record under way starts, when one is (a chunk ended inside it).
    var pendingRecordStart: Int? { inRecord ? recordStart.byteOffset : nil }

    init(projection: JSONProjection, format: JSONPageReader.Format, recordsPath: [String]?, capturePaths: [[String]], maxDepth: Int,
         objectPageIsRecord: Bool = false, recordsMayBeMissing: Bool = false) {
        machine = JSONMachine(
            mode: format == .json ? .page : .ndjson,
            recordsPath: recordsPath,
            capturePaths: capturePaths,
            maxDepth: maxDepth,
            yieldsRecordStarts: true,
            objectPageIsRecord: objectPageIsRecord,
            recordsMayBeMissing: recordsMayBeMissing
        )
        projector = RecordProjector(plan: projection.plan, ndjson: format == .ndjson, maxDepth: maxDepth)
        if projection.buildsRecords {
            // An NDJSON record is one line: its builder says so where a newline meets it.
            builder = JSONMachine(mode: format == .ndjson ? .ndjson : .document, recordsPath: nil, capturePaths: [], maxDepth: maxDepth)
        }
    }

    var bufferedByteCount: Int { carry.bytes.count }

    /// Whether the page held its records array (or null there) so far.
    var sawRecords: Bool { machine.sawRecords }

    /// Starts on a chunk: first the carried token, completed from it.
    @usableFromInline
    mutating func beginChunk(_ bytes: UnsafeRawBufferPointer) throws(JSONError) {
        try checkUsable()
        failed = true
        isFinal = false
        chunkPosition = 0
        phase = .chunk
        if !carry.isEmpty {
            let (taken, complete) = carry.extend(from: bytes)
            chunkPosition = taken
            if complete {
                startRunning()
            }
        }
    }

    /// Parses on until a record completes (true: its values are ready) or the chunk is used up (false).
    @usableFromInline
    mutating func nextRecord(_ bytes: UnsafeRawBufferPointer) throws(JSONError) -> Bool {
        while true {
            switch phase {
            case .carry:
                var token: [UInt8] = []
                swap(&token, &running)
                var position = runningPosition
                let result = token.withUnsafeBytes { buffer -> Result<Bool, JSONError> in
                    do throws(JSONError) {
                        return .success(try drive(buffer, &position, base: runningBase))
                    } catch {
                        return .failure(error)
                    }
                }
                let ended = try result.get()
                runningPosition = position
                // The token's bytes are reused: nothing may point into them.
                if inRecord || ended { projector.pin() }
                if ended {
                    swap(&token, &running)
                    return true
                }
                if runningPosition < token.count, !isFinal {
                    // The token is followed by the start of another that this chunk cuts (rare).
                    let leftover = Array(token[runningPosition...]) + Array(bytes[chunkPosition...])
                    leftover.withUnsafeBytes { carry.start($0, base: runningBase + runningPosition) }
                    chunkPosition = bytes.count
                    phase = .done
                    return false
                }
                carry.recycle(&token)
                phase = isFinal ? .done : .chunk
            case .chunk:
                var position = chunkPosition
                let ended = try drive(bytes, &position, base: fedCount)
                chunkPosition = position
                if ended { return true }
                if chunkPosition < bytes.count {
                    carry.start(UnsafeRawBufferPointer(rebasing: bytes[chunkPosition...]), base: fedCount + chunkPosition)
                }
                phase = .done
                return false
            case .done:
                return false
            }
        }
    }

    /// Ends a chunk whose records were all taken: what it still holds of an
    /// unfinished record is copied out of it.
    @usableFromInline
    mutating func endChunk(_ bytes: UnsafeRawBufferPointer) {
        if inRecord { projector.pin() }
        fedCount += bytes.count
        failed = false
    }

    /// Starts on the page's end: the carried token, if any, is its last.
    @usableFromInline
    mutating func beginFinish() throws(JSONError) {
        try checkUsable()
        failed = true
        isFinal = true
        phase = .done
        if !carry.isEmpty {
            startRunning()
        }
    }

    /// Ends the page: throws unless it is complete; the captured values.
    @usableFromInline
    mutating func endFinish() throws(JSONError) -> [[String]: JSONValue] {
        if inRecord {
            throw builder?.error("unexpected end of the page", at: fedCount) ?? projector.error("unexpected end of the page", at: fedCount)
        }
        try machine.checkComplete(at: fedCount)
        finished = true
        failed = false
        return machine.capturedValues
    }

    /// Calls `body` with the completed record's values (valid only during the call).
    @usableFromInline
    func withRecord(_ body: (ProjectedRecord) throws -> Void) rethrows {
        try projector.withSlots { slots in
            if projector.strings.isEmpty, projector.text.isEmpty {
                // Most records: every value is in the input (or needs no bytes).
                let none = UnsafeRawBufferPointer(start: nil, count: 0)
                return try body(ProjectedRecord(slots: slots, strings: none, text: none, rootKind: projector.rootKind))
            }
            try projector.strings.withUnsafeBytes { strings in
                try projector.text.withUnsafeBytes { text in
                    try body(ProjectedRecord(slots: slots, strings: strings, text: text, rootKind: projector.rootKind))
                }
            }
        }
    }

    private mutating func startRunning() {
        runningBase = carry.base
        running = carry.take()
        runningPosition = 0
        phase = .carry
    }

    /// Parses until a record ends (true) or the buffer does (false).
    private mutating func drive(_ buffer: UnsafeRawBufferPointer, _ position: inout Int, base: Int) throws(JSONError) -> Bool {
        while true {
            if inRecord, builder != nil {
                guard case .record(let value) = try builder!.step(buffer, &position, base: base, isFinal: isFinal) else { return false }
                builtRecord = value
                inRecord = false
                recordEnd = base + position
                machine.setLine(builder!.line, lineStart: builder!.lineStart)
                machine.recordEnded()
                recordCount += 1
                return true
            }
            if inRecord {
                guard try projector.step(buffer, &position, base: base, isFinal: isFinal) else { return false }
                inRecord = false
                recordEnd = base + position
                machine.setLine(projector.line, lineStart: projector.lineStart)
                machine.recordEnded()
                recordCount += 1
                return true
            }
            if !machine.skipToNextRecord(buffer, &position, base: base) {
                switch try machine.step(buffer, &position, base: base, isFinal: isFinal) {
                case .needMore:
                    return false
                case .recordStart:
                    break
                case .record:
                    preconditionFailure("a machine that yields record starts never builds a record")
                }
            }
            let offset = base + position
            recordStart = JSONPosition(byteOffset: offset, line: machine.line, column: max(1, offset - machine.lineStart + 1))
            if builder != nil {
                // Depth counts from the top of the page, as the projector's does.
                builder!.restartDocument(depth: machine.depth)
                builder!.setLine(machine.line, lineStart: machine.lineStart)
                builtRecord = nil
            } else {
                projector.begin(line: machine.line, lineStart: machine.lineStart, depth: machine.depth)
            }
            inRecord = true
        }
    }

    private func checkUsable() throws(JSONError) {
        if finished {
            throw machine.error("the page was already finished", at: fedCount)
        }
        if failed {
            throw machine.error("the reader stopped at an earlier error", at: fedCount)
        }
    }
}

/// A completed record's values, as `ProjectingParser.withRecord` lends them.
///
/// Inlined into `JSONProjectionReader.deliver`, so that a sink's `switch` on
/// a value meets the slot it comes from.
@usableFromInline
struct ProjectedRecord {
    /// The fields' slots, then the record's excerpt.
    @usableFromInline let slots: UnsafeBufferPointer<FieldSlot>
    @usableFromInline let strings: UnsafeRawBufferPointer
    @usableFromInline let text: UnsafeRawBufferPointer
    @usableFromInline let rootKind: JSONValueKind

    fileprivate init(slots: UnsafeBufferPointer<FieldSlot>, strings: UnsafeRawBufferPointer, text: UnsafeRawBufferPointer, rootKind: JSONValueKind) {
        self.slots = slots
        self.strings = strings
        self.text = text
        self.rootKind = rootKind
    }

    /// How many fields the projection has.
    @inlinable
    var fieldCount: Int { slots.count - 1 }

    /// What the record is when it is not an object.
    @inlinable
    var notAnObject: JSONFieldMismatch? {
        guard rootKind != .object, case .mismatch(let found) = slots[slots.count - 1].value(strings: strings, text: text) else {
            return nil
        }
        return found
    }

    /// Field `field`'s value.
    @inlinable
    subscript(field: Int) -> JSONFieldValue {
        slots[field].value(strings: strings, text: text)
    }
}
