import Foundation
import SwellJSON

/// Writes skipped records to the rejects file (NDJSON), one line each:
/// `{"source", "page", "index", "error", "record"}`. The file is created (with
/// its directory) at the first reject of a run, replacing an older one.
///
/// `@unchecked Sendable`: workers call it concurrently; `lock` guards the handle.
final class RejectsWriter: @unchecked Sendable {
    let path: String
    private let source: String
    private let redactor: Redactor
    private let lock = NSLock()
    private var handle: FileHandle?

    init(path: String, source: String, redactor: Redactor) {
        self.path = path
        self.source = source
        self.redactor = redactor
    }

    func write(page: String, index: Int, error: String, record: JSONValue) throws(PipelineError) {
        let line = "{\"source\":\(Self.quote(source)),\"page\":\(Self.quote(redactor(page))),\"index\":\(index),\"error\":\(Self.quote(redactor(error))),\"record\":\(redactor(record.jsonText))}\n"
        lock.lock()
        defer { lock.unlock() }
        do {
            if handle == nil {
                let url = URL(fileURLWithPath: path)
                try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
                guard FileManager.default.createFile(atPath: path, contents: nil) else {
                    throw PipelineError(.cannotCreate, "cannot create the rejects file \(path)")
                }
                handle = try FileHandle(forWritingTo: url)
            }
            try handle?.write(contentsOf: Data(line.utf8))
        } catch let error as PipelineError {
            throw error
        } catch {
            throw PipelineError(.cannotCreate, "cannot write the rejects file \(path): \(error.localizedDescription)", underlying: error)
        }
    }

    /// Flushes the file to disk and closes it; a failure (the disk filled up at the last
    /// write-back) is a `.cannotCreate` error naming the file, as a failed write is.
    func close() throws(PipelineError) {
        lock.lock()
        defer { lock.unlock() }
        guard let open = handle else { return }
        handle = nil
        do {
            try open.synchronize()
            try open.close()
        } catch {
            throw PipelineError(.cannotCreate, "cannot write the rejects file \(path): \(error.localizedDescription)", underlying: error)
        }
    }

    /// A JSON string literal.
    static func quote(_ text: String) -> String {
        JSONValue.string(text).jsonText
    }
}
