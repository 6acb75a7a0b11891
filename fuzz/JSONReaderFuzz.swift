// libFuzzer target for SwellJSON: any bytes, whole or fed in two chunks, as a
// JSON page (records at `data`, capturing `next`) and as NDJSON, must give
// records or a JSONError, never a crash or a hang. The projecting reader must
// agree with the page reader: the same error, or the same records (each
// object record's compact text and `a.b` field). Built by scripts/fuzz.sh.
import SwellJSON

/// Keeps what the fuzzer compares: per record, the root's JSON text (or that it is not an object).
struct FuzzSink: JSONProjectionSink {
    var records: [String?] = []
    private var text: String?

    mutating func field(_ field: Int, value: JSONFieldValue) throws {
        if field == 0, case .json(let bytes) = value {
            text = String(decoding: bytes, as: UTF8.self)
        }
    }

    mutating func notAnObject(_ found: JSONFieldMismatch) throws {
        text = nil
    }

    mutating func recordEnd(index: Int, start: JSONPosition) throws {
        records.append(text)
        text = nil
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSONReader(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: start, count: count)
    _ = try? JSONValue.parse(Array(bytes))
    let projection = JSONProjection(fields: [.init([], as: .json), .init(["a", "b"], as: .text), .init(["a"], as: .integer)])
    for format in [JSONPageReader.Format.json, .ndjson] {
        let recordsPath: [String]? = format == .json ? ["data"] : nil
        let split = count / 2
        var reader = JSONPageReader(format: format, recordsPath: recordsPath, capturePaths: [["next"]])
        var pageRecords: [String?] = []
        var pageError: JSONError?
        let take: (Int, JSONValue) -> Void = { _, record in
            if case .object = record { pageRecords.append(record.jsonText) } else { pageRecords.append(nil) }
        }
        do {
            try reader.feed(UnsafeRawBufferPointer(rebasing: bytes[0..<split]), onRecord: take)
            try reader.feed(UnsafeRawBufferPointer(rebasing: bytes[split...]), onRecord: take)
            _ = try reader.finish(onRecord: take)
        } catch {
            pageError = error as? JSONError
        }
        var projecting = JSONProjectionReader(projection: projection, format: format, recordsPath: recordsPath, capturePaths: [["next"]])
        var sink = FuzzSink()
        var projectionError: JSONError?
        do {
            try projecting.feed(UnsafeRawBufferPointer(rebasing: bytes[0..<split]), into: &sink)
            try projecting.feed(UnsafeRawBufferPointer(rebasing: bytes[split...]), into: &sink)
            _ = try projecting.finish(into: &sink)
        } catch {
            projectionError = error as? JSONError
        }
        precondition(projectionError == pageError, "the readers disagree: \(String(describing: pageError)) against \(String(describing: projectionError))")
        if pageError == nil {
            precondition(sink.records == pageRecords, "the readers give different records")
        }
    }
    return 0
}
