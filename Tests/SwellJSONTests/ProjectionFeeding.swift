import Testing
@testable import SwellJSON

/// A projected value copied out of the sink call, comparable in tests.
enum Projected: Equatable, CustomStringConvertible {
    case missing
    case null
    case integer(Int64)
    /// A double by its bits, so that -0.0 and 0.0 differ.
    case doubleBits(UInt64)
    case bool(Bool)
    case string([UInt8])
    case json(String)
    case mismatch(JSONValueKind, excerpt: String, position: JSONPosition)

    init(_ value: JSONFieldValue) {
        switch value {
        case .missing: self = .missing
        case .null: self = .null
        case .integer(let value): self = .integer(value)
        case .double(let value): self = .doubleBits(value.bitPattern)
        case .bool(let value): self = .bool(value)
        case .string(let bytes): self = .string(Array(bytes))
        case .json(let bytes): self = .json(String(decoding: bytes, as: UTF8.self))
        case .mismatch(let mismatch):
            self = .mismatch(mismatch.found, excerpt: String(decoding: mismatch.excerpt, as: UTF8.self), position: mismatch.position)
        }
    }

    static func text(_ string: String) -> Projected { .string(Array(string.utf8)) }
    static func double(_ value: Double) -> Projected { .doubleBits(value.bitPattern) }

    var description: String {
        switch self {
        case .missing: "missing"
        case .null: "null"
        case .integer(let value): "integer(\(value))"
        case .doubleBits(let bits): "double(\(Double(bitPattern: bits)))"
        case .bool(let value): "bool(\(value))"
        case .string(let bytes): "string(\(String(decoding: bytes, as: UTF8.self).debugDescription))"
        case .json(let text): "json(\(text))"
        case .mismatch(let found, let excerpt, let position):
            "mismatch(\(found), \(excerpt.debugDescription), byte \(position.byteOffset) line \(position.line) column \(position.column))"
        }
    }

    /// The same value with a mismatch's position left out (for comparisons with a tree, which has none).
    var withoutPosition: Projected {
        guard case .mismatch(let found, let excerpt, _) = self else { return self }
        return .mismatch(found, excerpt: excerpt, position: JSONPosition(byteOffset: 0, line: 0, column: 0))
    }
}

/// One record as a sink saw it.
struct ProjectedRecordResult: Equatable, CustomStringConvertible {
    var fields: [Projected] = []
    /// Set when the record is not an object.
    var notAnObject: Projected?
    var index = -1
    var start = JSONPosition(byteOffset: -1, line: -1, column: -1)
    /// The page offset one past the record's last byte.
    var end = -1

    var description: String {
        "#\(index) at \(start.byteOffset): \(notAnObject.map { "not an object: \($0)" } ?? fields.description)"
    }
}

/// Copies every call it gets.
struct CollectingSink: JSONProjectionSink {
    var records: [ProjectedRecordResult] = []
    private var current = ProjectedRecordResult()
    /// Throws `StopProjecting` at the end of this record index.
    var stopAt: Int?

    init(stopAt: Int? = nil) {
        self.stopAt = stopAt
    }

    mutating func field(_ field: Int, value: JSONFieldValue) throws {
        if field != current.fields.count {
            Issue.record("field \(field) came after \(current.fields.count) others")
        }
        current.fields.append(Projected(value))
    }

    mutating func notAnObject(_ found: JSONFieldMismatch) throws {
        current.notAnObject = Projected(.mismatch(found))
    }

    mutating func recordEnd(index: Int, start: JSONPosition, end: Int) throws {
        current.index = index
        current.start = start
        current.end = end
        records.append(current)
        current = ProjectedRecordResult()
        if index == stopAt { throw StopProjecting() }
    }
}

struct StopProjecting: Error, Equatable {}

/// What a page gave through a `JSONProjectionReader`.
struct ProjectedPage: Equatable {
    var records: [ProjectedRecordResult] = []
    var captures: [[String]: JSONValue] = [:]
    var maxBuffered = 0
}

/// Feeds `page` to a new projecting reader in chunks of `chunkSize` bytes (or
/// cut at `cuts`) and finishes it.
func project(
    _ page: [UInt8],
    _ fields: [JSONProjection.Field],
    chunkSize: Int = 1 << 16,
    cuts: [Int]? = nil,
    format: JSONPageReader.Format = .json,
    recordsPath: [String]? = nil,
    capturePaths: [[String]] = [],
    maxDepth: Int = 512,
    objectPageIsRecord: Bool = false
) throws -> ProjectedPage {
    var reader = JSONProjectionReader(
        projection: JSONProjection(fields: fields), format: format, recordsPath: recordsPath, capturePaths: capturePaths, maxDepth: maxDepth,
        objectPageIsRecord: objectPageIsRecord
    )
    var sink = CollectingSink()
    var result = ProjectedPage()
    let bounds = cuts ?? Array(stride(from: chunkSize, to: page.count, by: chunkSize))
    try page.withUnsafeBytes { buffer in
        var start = 0
        for end in bounds + [buffer.count] where end >= start {
            // Each chunk is copied into its own buffer, freed after the call: nothing may point into it later.
            let chunk = Array(buffer[start..<end])
            try chunk.withUnsafeBytes { try reader.feed($0, into: &sink) }
            result.maxBuffered = max(result.maxBuffered, reader.bufferedByteCount)
            start = end
        }
    }
    result.captures = try reader.finish(into: &sink)
    result.records = sink.records
    return result
}

/// The JSONError that projecting `page` throws, if any.
func projectError(
    _ page: [UInt8],
    _ fields: [JSONProjection.Field] = [JSONProjection.Field(["a"], as: .json)],
    chunkSize: Int = 1 << 16,
    format: JSONPageReader.Format = .json,
    recordsPath: [String]? = nil,
    maxDepth: Int = 512
) -> JSONError? {
    do {
        _ = try project(page, fields, chunkSize: chunkSize, format: format, recordsPath: recordsPath, maxDepth: maxDepth)
        return nil
    } catch let error as JSONError {
        return error
    } catch {
        return nil
    }
}

/// The JSONError that the page reader throws for `page`, if any.
func pageReaderError(
    _ page: [UInt8],
    chunkSize: Int = 1 << 16,
    format: JSONPageReader.Format = .json,
    recordsPath: [String]? = nil,
    maxDepth: Int = 512
) -> JSONError? {
    do {
        _ = try feed(page, chunkSize: chunkSize, format: format, recordsPath: recordsPath, maxDepth: maxDepth)
        return nil
    } catch let error as JSONError {
        return error
    } catch {
        return nil
    }
}
