import Foundation
import Testing
@testable import SwellJSON

/// The test_parsing folder of JSONTestSuite, found from this file's path.
private let suiteDirectory = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent()
    .appendingPathComponent("../../../shared/fixtures/JSONTestSuite/test_parsing")
    .standardizedFileURL

private func suiteFiles(prefix: String) throws -> [(name: String, bytes: [UInt8])] {
    let names = try FileManager.default.contentsOfDirectory(atPath: suiteDirectory.path)
        .filter { $0.hasPrefix(prefix) && $0.hasSuffix(".json") }
        .sorted()
    return try names.map { name in
        (name, Array(try Data(contentsOf: suiteDirectory.appendingPathComponent(name))))
    }
}

@Test func everyYesFileOfJSONTestSuiteParses() throws {
    let files = try suiteFiles(prefix: "y_")
    #expect(files.count == 95)
    for file in files {
        #expect(parseError(file.bytes) == nil, "\(file.name): \(String(describing: parseError(file.bytes)))")
    }
}

@Test func everyNoFileOfJSONTestSuiteIsRejected() throws {
    let files = try suiteFiles(prefix: "n_")
    #expect(files.count == 188)
    for file in files {
        #expect(parseError(file.bytes) != nil, "\(file.name) was accepted")
    }
}

@Test func everyImplementationDefinedFileOfJSONTestSuiteEndsWithoutCrashing() throws {
    let files = try suiteFiles(prefix: "i_")
    #expect(files.count == 35)
    for file in files {
        // Either answer is allowed, but one answer: the whole buffer and the page reader fed
        // three bytes at a time accept the file or refuse it alike.
        let whole = parseError(file.bytes) == nil
        let fed: Bool
        do {
            _ = try feed(file.bytes, chunkSize: 3)
            fed = true
        } catch {
            fed = false
        }
        #expect(whole == fed, "\(file.name): the whole buffer \(whole ? "accepts" : "refuses") it, the page reader \(fed ? "accepts" : "refuses") it")
    }
}

@Test func everyNoFileOfJSONTestSuiteIsRejectedByThePageReaderByteByByte() throws {
    for file in try suiteFiles(prefix: "n_") {
        #expect(throws: JSONError.self, "\(file.name) was accepted") {
            try feed(file.bytes, chunkSize: 1)
        }
    }
}

@Test func yesFilesFedByteByByteGiveTheSameRecordsAsParse() throws {
    var arrays = 0
    for file in try suiteFiles(prefix: "y_") {
        let parsed = try JSONValue.parse(file.bytes)
        guard case .array(let elements) = parsed else { continue }
        arrays += 1
        let page = try feed(file.bytes, chunkSize: 1)
        #expect(page.records == elements, "\(file.name)")
        #expect(page.indices == Array(elements.indices), "\(file.name)")
    }
    #expect(arrays > 60)
}

@Test func theProjectingReaderAnswersEveryFileOfJSONTestSuiteAsThePageReaderDoes() throws {
    let fields = [JSONProjection.Field([], as: .json), JSONProjection.Field(["a"], as: .text)]
    for file in try suiteFiles(prefix: "") {
        for format in [JSONPageReader.Format.json, .ndjson] {
            for chunkSize in [1, 1 << 16] {
                let expected: FedPage
                do {
                    expected = try feed(file.bytes, chunkSize: chunkSize, format: format)
                } catch {
                    #expect(projectError(file.bytes, fields, chunkSize: chunkSize, format: format) == error as? JSONError,
                            "\(file.name) (\(format), chunks of \(chunkSize))")
                    continue
                }
                let projected = try project(file.bytes, fields, chunkSize: chunkSize, format: format)
                #expect(projected.records.count == expected.records.count, "\(file.name)")
                for (record, tree) in zip(projected.records, expected.records) {
                    if case .object = tree {
                        #expect(record.fields.first == .json(tree.jsonText), "\(file.name)")
                    } else {
                        #expect(record.notAnObject != nil, "\(file.name)")
                    }
                }
            }
        }
    }
}
