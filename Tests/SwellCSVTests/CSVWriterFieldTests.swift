import Foundation
import Testing
@testable import SwellCSV

/// Field-by-field writing (the exports' path from the store's bytes) gives the
/// same bytes as whole rows of cells.

private func fieldBytes(escapeFormulas: Bool = false, _ write: (CSVWriter) throws -> Void) throws -> [UInt8] {
    let output = MemoryOutput()
    let writer = CSVWriter(output: output, escapeFormulas: escapeFormulas, bufferSize: 64)
    try write(writer)
    try writer.finish()
    return output.bytes
}

@Test func fieldByFieldRowsMatchCellRows() throws {
    let texts = ["a,b", "say \"hi\"", "", "=SUM(A1)", "line\nbreak", "ok", String(repeating: "x", count: 200), "é 한 🌊"]
    for escape in [false, true] {
        let expected = try csvBytes(rows: texts.map { [.text($0), .value("4-6 ft"), .null, .value("42")] }, escapeFormulas: escape)
        let written = try fieldBytes(escapeFormulas: escape) { writer in
            for text in texts {
                var text = text
                try text.withUTF8 { try writer.writeTextField($0) }
                try writer.writeValueField("4-6 ft")
                try writer.writeNullField()
                try writer.writeIntegerField(42)
                try writer.endRow()
            }
        }
        #expect(written == expected)
    }
}

@Test func integerFieldsAreTheirDecimalDigits() throws {
    let values: [Int64] = [0, 7, -3, 10, 99, 100, 1_234_567_890, .max, .min, -1]
    let written = try fieldBytes { writer in
        for value in values {
            try writer.writeIntegerField(value)
            try writer.endRow()
        }
    }
    #expect(String(decoding: written, as: UTF8.self) == values.map { CSVFormat.integer($0) + "\n" }.joined())
}

@Test func valueFieldsFromBytesAreNeverFormulaEscaped() throws {
    let written = try fieldBytes(escapeFormulas: true) { writer in
        var value = "-3"
        try value.withUTF8 { try writer.writeValueField($0) }
        try writer.endRow()
    }
    #expect(String(decoding: written, as: UTF8.self) == "-3\n")
}

@Test func theObserverSeesEveryByteTheFileGets() throws {
    try withTemporaryDirectory { directory in
        for gzip in [false, true] {
            let path = directory + (gzip ? "/out.csv.gz" : "/out.csv")
            var seen: [UInt8] = []
            let output: CSVOutput = gzip
                ? try GzipFileOutput(path: path, onFileBytes: { seen.append(contentsOf: $0) })
                : try AtomicFileOutput(path: path, onFileBytes: { seen.append(contentsOf: $0) })
            let writer = CSVWriter(output: output)
            for row in 0..<20_000 { try writer.writeRow([.value(String(row)), .text("row \(row), quoted")]) }
            try writer.finish()
            #expect(seen == (try readBytes(path)))
            #expect(Int64(seen.count) == output.bytesWritten)
        }
    }
}
