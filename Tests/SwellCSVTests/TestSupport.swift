import CZlib
import Foundation
@testable import SwellCSV

/// A fresh directory under the system's temporary directory, removed after `body`.
func withTemporaryDirectory<R>(_ body: (String) throws -> R) throws -> R {
    let directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("swell-csv-tests-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    return try body(directory)
}

/// The names in `directory`, sorted.
func listing(_ directory: String) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
}

func readBytes(_ path: String) throws -> [UInt8] {
    [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
}

/// An in-memory output that records each write.
final class MemoryOutput: CSVOutput {
    var bytes: [UInt8] = []
    var writeSizes: [Int] = []
    var finished = false

    func write(_ bytes: UnsafeRawBufferPointer) throws(CSVError) {
        self.bytes.append(contentsOf: bytes)
        writeSizes.append(bytes.count)
    }

    func finish() throws(CSVError) {
        finished = true
    }

    func abort() {}

    var bytesWritten: Int64 {
        Int64(bytes.count)
    }

    var text: String {
        String(decoding: bytes, as: UTF8.self)
    }
}

/// Writes `rows` (and `header`) with a `CSVWriter` into memory and returns the bytes.
func csvBytes(header: [String]? = nil, rows: [[CSVCell]], escapeFormulas: Bool = false) throws -> [UInt8] {
    let output = MemoryOutput()
    let writer = CSVWriter(output: output, escapeFormulas: escapeFormulas)
    if let header { try writer.writeHeader(header) }
    for row in rows { try writer.writeRow(row) }
    try writer.finish()
    return output.bytes
}

enum RFC4180ParseError: Error {
    case quoteInsideUnquotedField(offset: Int)
    case unexpectedByteAfterClosingQuote(offset: Int)
    case unterminatedQuotedField
    case missingFinalLineFeed
}

/// A strict RFC 4180 reader for LF-terminated records: every record, the last included, must end with LF.
func parseCSV(_ bytes: [UInt8]) throws -> [[String]] {
    let quote = UInt8(ascii: "\""), comma = UInt8(ascii: ","), lineFeed = UInt8(ascii: "\n")
    var records: [[String]] = []
    var record: [String] = []
    var field: [UInt8] = []
    var index = 0
    var atFieldStart = true
    while index < bytes.count {
        let byte = bytes[index]
        if atFieldStart && byte == quote {
            index += 1
            while true {
                guard index < bytes.count else { throw RFC4180ParseError.unterminatedQuotedField }
                if bytes[index] == quote {
                    if index + 1 < bytes.count && bytes[index + 1] == quote {
                        field.append(quote)
                        index += 2
                        continue
                    }
                    index += 1
                    break
                }
                field.append(bytes[index])
                index += 1
            }
            guard index < bytes.count, bytes[index] == comma || bytes[index] == lineFeed else {
                throw RFC4180ParseError.unexpectedByteAfterClosingQuote(offset: index)
            }
            atFieldStart = false
            continue
        }
        switch byte {
        case comma:
            record.append(String(decoding: field, as: UTF8.self))
            field = []
            atFieldStart = true
        case lineFeed:
            record.append(String(decoding: field, as: UTF8.self))
            records.append(record)
            field = []
            record = []
            atFieldStart = true
        case quote:
            throw RFC4180ParseError.quoteInsideUnquotedField(offset: index)
        default:
            field.append(byte)
            atFieldStart = false
        }
        index += 1
    }
    guard field.isEmpty, record.isEmpty, atFieldStart else { throw RFC4180ParseError.missingFinalLineFeed }
    return records
}

/// Inflates `data` as ONE stream of zlib's `windowBits` kind (-15 raw deflate, 31 one gzip
/// member); nil unless the stream ends exactly at the last byte.
func inflateWhole(_ data: [UInt8], windowBits: Int32) -> [UInt8]? {
    let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
    stream.initialize(to: z_stream())
    defer {
        inflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
    }
    guard swell_inflate_init2(stream, windowBits) == Z_OK else { return nil }
    var plain: [UInt8] = []
    var output = [UInt8](repeating: 0, count: 64 * 1024)
    var input = data
    return input.withUnsafeMutableBufferPointer { buffer -> [UInt8]? in
        stream.pointee.next_in = buffer.baseAddress
        stream.pointee.avail_in = UInt32(buffer.count)
        while true {
            let (status, produced) = output.withUnsafeMutableBufferPointer { out -> (Int32, Int) in
                stream.pointee.next_out = out.baseAddress
                stream.pointee.avail_out = UInt32(out.count)
                let status = inflate(stream, Z_NO_FLUSH)
                return (status, out.count - Int(stream.pointee.avail_out))
            }
            plain.append(contentsOf: output[0..<produced])
            if status == Z_STREAM_END { return stream.pointee.avail_in == 0 ? plain : nil }
            guard status == Z_OK else { return nil }
        }
    }
}
