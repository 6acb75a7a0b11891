@testable import SwellJSON

/// What a page gave when fed to a `JSONPageReader`.
struct FedPage {
    var records: [JSONValue] = []
    var indices: [Int] = []
    var captures: [[String]: JSONValue] = [:]
    var maxBuffered = 0
}

/// Feeds `page` to a new reader in chunks of `chunkSize` bytes and finishes it.
func feed(
    _ page: [UInt8],
    chunkSize: Int,
    format: JSONPageReader.Format = .json,
    recordsPath: [String]? = nil,
    capturePaths: [[String]] = [],
    maxDepth: Int = 512,
    objectPageIsRecord: Bool = false
) throws -> FedPage {
    var reader = JSONPageReader(format: format, recordsPath: recordsPath, capturePaths: capturePaths, maxDepth: maxDepth,
                                objectPageIsRecord: objectPageIsRecord)
    var fed = FedPage()
    let collect: (Int, JSONValue) throws -> Void = { index, record in
        fed.indices.append(index)
        fed.records.append(record)
    }
    try page.withUnsafeBytes { buffer in
        var start = 0
        while start < buffer.count {
            let end = min(start + chunkSize, buffer.count)
            try reader.feed(UnsafeRawBufferPointer(rebasing: buffer[start..<end]), onRecord: collect)
            fed.maxBuffered = max(fed.maxBuffered, reader.bufferedByteCount)
            start = end
        }
    }
    fed.captures = try reader.finish(onRecord: collect)
    return fed
}

/// The JSONError that feeding `text` (in chunks of `chunkSize`) throws, if any.
func feedError(
    _ text: String,
    chunkSize: Int = 1 << 16,
    format: JSONPageReader.Format = .json,
    recordsPath: [String]? = nil
) -> JSONError? {
    do {
        _ = try feed(Array(text.utf8), chunkSize: chunkSize, format: format, recordsPath: recordsPath)
        return nil
    } catch let error as JSONError {
        return error
    } catch {
        return nil
    }
}

/// The JSONError that `JSONValue.parse` throws for `bytes`, if any.
func parseError(_ bytes: [UInt8], maxDepth: Int = 512) -> JSONError? {
    do {
        _ = try JSONValue.parse(bytes, maxDepth: maxDepth)
        return nil
    } catch {
        return error
    }
}
