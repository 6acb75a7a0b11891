// libFuzzer target for SwellJSON: any bytes, whole or fed in two chunks, as a
// JSON page (records at `data`, capturing `next`) and as NDJSON, must give
// records or a JSONError, never a crash or a hang. Built by scripts/fuzz.sh.
import SwellJSON

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSONReader(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: start, count: count)
    _ = try? JSONValue.parse(Array(bytes))
    for format in [JSONPageReader.Format.json, .ndjson] {
        var reader = JSONPageReader(format: format, recordsPath: format == .json ? ["data"] : nil, capturePaths: [["next"]])
        let split = count / 2
        do {
            try reader.feed(UnsafeRawBufferPointer(rebasing: bytes[0..<split])) { _, record in _ = record.jsonText }
            try reader.feed(UnsafeRawBufferPointer(rebasing: bytes[split...])) { _, record in _ = record.jsonText }
            _ = try reader.finish { _, record in _ = record.jsonText }
        } catch {
            continue
        }
    }
    return 0
}
