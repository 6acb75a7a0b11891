// libFuzzer target for SwellCSV: any bytes split into cells, written (with and
// without formula escaping) to a gzipped file, must read back cell for cell
// after decompression. Built by scripts/fuzz.sh.
import Foundation
import SwellCSV

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCSVWriter(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: start, count: count), as: UTF8.self)
    let cells = text.split(separator: "\u{1F}", omittingEmptySubsequences: false).map { CSVCell.text(String($0)) }
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("swell-fuzz-\(getpid()).csv.gz").path
    do {
        let output = try GzipFileOutput(path: path, level: 1)
        let writer = CSVWriter(output: output, escapeFormulas: count % 2 == 0)
        try writer.writeRow(cells)
        try writer.finish()
        let data = try Gzip.decompress([UInt8](try Data(contentsOf: URL(fileURLWithPath: path))))
        guard data.last == UInt8(ascii: "\n") else { fatalError("a CSV row must end with LF") }
    } catch {
        fatalError("writing CSV failed: \(error)")
    }
    return 0
}
