// swell-json-bench: times SwellJSON's readers on one file, on one core.
//
//   swell-json-bench FILE [--reader projection|tree] [--format ndjson|json] [--records-path a.b]
//                         [--chunk BYTES] [--repeat N]
//
// The file is read into memory first; each pass feeds it to a new reader in
// chunks of --chunk bytes (64 KiB), as a file or HTTP source would, and only
// that is timed (thread CPU time and wall time). The fields are the bench
// records' (../shared/bench/gen.py): every top-level scalar and spot.name.
// `projection` is JSONProjectionReader into a sink that folds every value
// into a checksum; `tree` is JSONPageReader with the same fields looked up in
// each record's JSONValue, for comparison. Not part of any product.

#if canImport(Glibc)
import Glibc
#endif
import SwellJSON

let fields: [JSONProjection.Field] = [
    .init(["id"], as: .integer), .init(["date"], as: .string), .init(["height"], as: .string),
    .init(["period"], as: .text), .init(["wind"], as: .string), .init(["location"], as: .string),
    .init(["rating"], as: .integer), .init(["spot", "name"], as: .string),
]

struct Options {
    var path = ""
    var reader = "projection"
    var format = JSONPageReader.Format.ndjson
    var recordsPath: [String]?
    var chunk = 1 << 16
    var repeats = 1

    init(_ arguments: [String]) throws {
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            switch argument {
            case "--reader": reader = rest.popFirst() ?? ""
            case "--format": format = rest.popFirst() == "json" ? .json : .ndjson
            case "--records-path": recordsPath = rest.popFirst()?.split(separator: ".").map(String.init)
            case "--chunk": chunk = Int(rest.popFirst() ?? "") ?? 0
            case "--repeat": repeats = Int(rest.popFirst() ?? "") ?? 0
            default: path = argument
            }
        }
        guard !path.isEmpty, chunk > 0, repeats > 0, ["projection", "tree"].contains(reader) else {
            throw UsageError()
        }
    }
}

struct UsageError: Error {}

/// Folds every value it gets into a checksum, so that none of the work can be dropped.
struct ChecksumSink: JSONProjectionSink {
    var checksum: UInt64 = 0
    var mismatches = 0
    var nulls = 0

    mutating func field(_ field: Int, value: JSONFieldValue) throws {
        switch value {
        case .missing, .null: nulls += 1
        case .integer(let value): checksum &+= UInt64(bitPattern: value)
        case .double(let value): checksum &+= value.bitPattern
        case .bool(let value): checksum &+= value ? 1 : 0
        case .string(let bytes), .json(let bytes): checksum &+= UInt64(bytes.count) &+ UInt64(bytes.first ?? 0)
        case .mismatch: mismatches += 1
        }
    }

    mutating func notAnObject(_ found: JSONFieldMismatch) throws {
        mismatches += 1
    }

    mutating func recordEnd(index: Int, start: JSONPosition, end: Int) throws {
        checksum &+= UInt64(index)
    }
}

/// The whole file, in one allocation (so that allocation counts do not depend on its size).
func readFile(_ path: String) -> [UInt8]? {
    guard let file = fopen(path, "rb") else { return nil }
    defer { fclose(file) }
    guard fseek(file, 0, SEEK_END) == 0 else { return nil }
    let size = ftell(file)
    guard size >= 0, fseek(file, 0, SEEK_SET) == 0 else { return nil }
    var complete = false
    let bytes = [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
        initialized = size == 0 ? 0 : fread(buffer.baseAddress, 1, size, file)
        complete = initialized == size
    }
    return complete ? bytes : nil
}

func seconds(_ clock: clockid_t) -> Double {
    var time = timespec()
    clock_gettime(clock, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

func chunks(_ page: UnsafeRawBufferPointer, _ size: Int, _ body: (UnsafeRawBufferPointer) throws -> Void) rethrows {
    var start = 0
    while start < page.count {
        let end = min(start + size, page.count)
        try body(UnsafeRawBufferPointer(rebasing: page[start..<end]))
        start = end
    }
}

func projectPass(_ page: UnsafeRawBufferPointer, _ options: Options) throws -> (records: Int, checksum: UInt64, mismatches: Int) {
    var reader = JSONProjectionReader(projection: JSONProjection(fields: fields), format: options.format, recordsPath: options.recordsPath)
    var sink = ChecksumSink()
    try chunks(page, options.chunk) { try reader.feed($0, into: &sink) }
    _ = try reader.finish(into: &sink)
    return (reader.recordCount, sink.checksum, sink.mismatches)
}

func treePass(_ page: UnsafeRawBufferPointer, _ options: Options) throws -> (records: Int, checksum: UInt64, mismatches: Int) {
    var reader = JSONPageReader(format: options.format, recordsPath: options.recordsPath)
    var checksum: UInt64 = 0
    var mismatches = 0
    let take: (Int, JSONValue) -> Void = { index, record in
        for field in fields {
            switch record.value(at: field.path) {
            case .number(let number)?:
                if field.kind == .integer, let value = number.int64 { checksum &+= UInt64(bitPattern: value) } else { checksum &+= UInt64(number.text.utf8.count) }
            case .string(let text)?: checksum &+= UInt64(text.utf8.count) &+ UInt64(text.utf8.first ?? 0)
            case .bool?, .null?, nil: break
            case .array?, .object?: mismatches += 1
            }
        }
        checksum &+= UInt64(index)
    }
    try chunks(page, options.chunk) { try reader.feed($0, onRecord: take) }
    _ = try reader.finish(onRecord: take)
    return (reader.recordCount, checksum, mismatches)
}

do {
    let options = try Options(Array(CommandLine.arguments.dropFirst()))
    guard let page = readFile(options.path) else {
        printError("swell-json-bench: cannot read \(options.path)")
        exit(66)
    }
    for pass in 1...options.repeats {
        let cpuStart = seconds(CLOCK_THREAD_CPUTIME_ID)
        let wallStart = seconds(CLOCK_MONOTONIC)
        let result = try page.withUnsafeBytes { buffer in
            options.reader == "tree" ? try treePass(buffer, options) : try projectPass(buffer, options)
        }
        let cpu = seconds(CLOCK_THREAD_CPUTIME_ID) - cpuStart
        let wall = seconds(CLOCK_MONOTONIC) - wallStart
        let megabytes = Double(page.count) / 1e6
        print("\(options.reader) pass \(pass): \(result.records) records, \(format3(megabytes)) MB, cpu \(format3(cpu)) s, wall \(format3(wall)) s, \(format3(megabytes / cpu)) MB/s (cpu), checksum \(result.checksum), mismatches \(result.mismatches)")
    }
} catch is UsageError {
    printError("usage: swell-json-bench FILE [--reader projection|tree] [--format ndjson|json] [--records-path a.b] [--chunk BYTES] [--repeat N]")
    exit(64)
} catch {
    printError("swell-json-bench: \(error)")
    exit(65)
}

func format3(_ value: Double) -> String {
    let scaled = (value * 1000).rounded()
    let whole = Int(scaled) / 1000
    let fraction = abs(Int(scaled) % 1000)
    return "\(whole).\(fraction < 10 ? "00" : fraction < 100 ? "0" : "")\(fraction)"
}

func printError(_ message: String) {
    var line = message + "\n"
    line.withUTF8 { _ = write(STDERR_FILENO, $0.baseAddress, $0.count) }
}
