/// Reads CSV as it arrives and writes each row as one line of NDJSON — `{"name": "value", …}`,
/// the header row's names (or the columns' numbers, `"1"`, `"2"`, … without one), every
/// value a JSON string and an empty field `null` — so that a CSV source's rows go through
/// the same reader, mapping and checks as JSON records (Pipeline file reference version 3,
/// `format: csv`).
///
/// RFC 4180 as Swell writes it and as spreadsheets export it: a field in double quotes may
/// hold the delimiter, quotes (doubled) and line breaks; rows end with LF or CR LF; a UTF-8
/// byte-order mark at the start is skipped; blank lines are skipped. Push-based, in constant
/// memory (a row at a time): libcurl hands the bytes over as they come, which a reader that
/// pulls from a stream (CSV.swift's) does not fit.
public struct CSVRecordTranscoder {
    /// Why the CSV could not be read: its 1-based line and what was wrong.
    public struct Failure: Error, CustomStringConvertible {
        public let line: Int
        public let message: String
        public var description: String { "line \(line): \(message)" }
    }

    private let delimiter: UInt8
    private let hasHeader: Bool
    private var names: [[UInt8]]?
    private var fields: [[UInt8]] = []
    private var field: [UInt8] = []
    /// Whether the field under way was quoted (an empty quoted field is "", not null).
    private var quoted = false
    private var state = State.fieldStart
    private var line = 1
    /// The line the row under way started on.
    private var rowLine = 1
    private var output: [UInt8] = []

    private enum State {
        case fieldStart, unquoted, quoted, quoteInQuoted, afterCR
    }

    /// A transcoder for fields separated by `delimiter` (one ASCII byte), the first row
    /// naming them when `header`.
    public init(delimiter: UInt8 = UInt8(ascii: ","), header: Bool = true) {
        self.delimiter = delimiter
        hasHeader = header
    }

    /// Reads `bytes`, handing the NDJSON of the rows they complete to `body`.
    ///
    /// - Throws: `Failure` for a row with more fields than the header, or a quote in an
    ///   unquoted field; `body`'s error.
    public mutating func feed(_ bytes: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        for byte in bytes {
            // A UTF-8 byte-order mark (EF BB BF) at the start is skipped; other bytes that
            // start the same way are read as they are.
            if !startDecided {
                start.append(byte)
                if start == Array(Self.byteOrderMark.prefix(start.count)) {
                    if start.count == 3 { startDecided = true }
                    continue
                }
                try releaseStart()
                continue
            }
            try take(byte)
        }
        if !output.isEmpty {
            try output.withUnsafeBytes { try body($0) }
            output.removeAll(keepingCapacity: true)
        }
    }

    /// The first bytes, held while they may be a byte-order mark.
    private var start: [UInt8] = []
    private var startDecided = false

    /// The held first bytes are data after all.
    private mutating func releaseStart() throws {
        startDecided = true
        let held = start
        start = []
        for byte in held { try take(byte) }
    }
    private static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]

    /// Ends the input: the last row, when it has no line end.
    ///
    /// - Throws: `Failure` for a quoted field that never closes.
    public mutating func finish(_ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        if !startDecided {
            // Fewer than three bytes in all, the start of a byte-order mark: they are data.
            try releaseStart()
        }
        switch state {
        case .quoted:
            throw Failure(line: rowLine, message: "a quoted field opened on this line never closes")
        case .afterCR:
            try endRow()
        default:
            if !fields.isEmpty || !field.isEmpty || quoted { try endField(); try endRow() }
        }
        if !output.isEmpty {
            try output.withUnsafeBytes { try body($0) }
            output.removeAll()
        }
    }

    private mutating func take(_ byte: UInt8) throws {
        switch state {
        case .afterCR:
            state = .fieldStart
            try endRow()
            if byte == 0x0A { return }
            try take(byte)
        case .fieldStart:
            if byte == UInt8(ascii: "\"") {
                quoted = true
                state = .quoted
            } else {
                state = .unquoted
                try unquoted(byte)
            }
        case .unquoted:
            try unquoted(byte)
        case .quoted:
            if byte == UInt8(ascii: "\"") {
                state = .quoteInQuoted
            } else {
                if byte == 0x0A { line += 1 }
                field.append(byte)
            }
        case .quoteInQuoted:
            if byte == UInt8(ascii: "\"") {
                field.append(byte)
                state = .quoted
            } else {
                state = .unquoted
                try unquoted(byte)
            }
        }
    }

    private mutating func unquoted(_ byte: UInt8) throws {
        switch byte {
        case delimiter:
            try endField()
            state = .fieldStart
        case 0x0A:
            try endField()
            try endRow()
            state = .fieldStart
        case 0x0D:
            try endField()
            state = .afterCR
        case UInt8(ascii: "\"") where !quoted:
            throw Failure(line: line, message: "a double quote inside an unquoted field (quote the field and double the quote)")
        default:
            field.append(byte)
        }
    }

    private mutating func endField() throws {
        fields.append(field)
        fieldWasQuoted.append(quoted)
        field.removeAll(keepingCapacity: true)
        quoted = false
    }

    /// Per field of the row under way: whether it was quoted (an empty quoted field is "", not null).
    private var fieldWasQuoted: [Bool] = []

    private mutating func endRow() throws {
        defer {
            fields.removeAll(keepingCapacity: true)
            fieldWasQuoted.removeAll(keepingCapacity: true)
            line += 1
            rowLine = line
        }
        // A blank line is no row.
        if fields.count == 1 && fields[0].isEmpty && !fieldWasQuoted[0] { return }
        if names == nil && hasHeader {
            names = fields
            return
        }
        var header = names ?? []
        if fields.count > header.count {
            guard !hasHeader else { throw Failure(line: rowLine, message: "\(fields.count) fields where the header names \(header.count)") }
            header += (header.count + 1...fields.count).map { Array(String($0).utf8) }
            names = header
        }
        output.append(UInt8(ascii: "{"))
        for (index, value) in fields.enumerated() {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            Self.appendJSONString(header[index], to: &output)
            output.append(UInt8(ascii: ":"))
            if value.isEmpty && !fieldWasQuoted[index] {
                output.append(contentsOf: "null".utf8)
            } else {
                Self.appendJSONString(value, to: &output)
            }
        }
        output.append(contentsOf: "}\n".utf8)
    }

    private static let hex = Array("0123456789abcdef".utf8)

    private static func appendJSONString(_ bytes: [UInt8], to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: "\\\"".utf8)
            case UInt8(ascii: "\\"): out.append(contentsOf: "\\\\".utf8)
            case 0x0A: out.append(contentsOf: "\\n".utf8)
            case 0x0D: out.append(contentsOf: "\\r".utf8)
            case 0x09: out.append(contentsOf: "\\t".utf8)
            case 0..<0x20: out.append(contentsOf: "\\u00".utf8); out.append(hex[Int(byte >> 4)]); out.append(hex[Int(byte & 15)])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
