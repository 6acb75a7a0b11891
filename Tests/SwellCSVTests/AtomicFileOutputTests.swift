import Foundation
import Testing
@testable import SwellCSV

private func write(_ text: String, to output: any CSVOutput) throws {
    var text = text
    try text.withUTF8 { bytes in try output.write(UnsafeRawBufferPointer(bytes)) }
}

@Test func targetAppearsOnlyAtFinish() throws {
    try withTemporaryDirectory { directory in
        let path = directory + "/out.csv"
        let output = try AtomicFileOutput(path: path)
        try write("a,b\n", to: output)
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(try listing(directory).count == 1)
        #expect(try listing(directory)[0].hasPrefix(".out.csv.tmp-\(getpid())-"))
        #expect(output.bytesWritten == 4)
        try output.finish()
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "a,b\n")
        #expect(try listing(directory) == ["out.csv"])
    }
}

@Test func replacingKeepsTheOldContentUntilFinish() throws {
    try withTemporaryDirectory { directory in
        let path = directory + "/out.csv"
        try "old\n".write(toFile: path, atomically: false, encoding: .utf8)
        let output = try AtomicFileOutput(path: path)
        try write("new\n", to: output)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "old\n")
        try output.finish()
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "new\n")
        #expect(try listing(directory) == ["out.csv"])
    }
}

@Test func abortRemovesTheTemporaryFileAndLeavesTheTargetAlone() throws {
    try withTemporaryDirectory { directory in
        let path = directory + "/out.csv"
        try "old\n".write(toFile: path, atomically: false, encoding: .utf8)
        let makers: [() throws -> any CSVOutput] = [{ try AtomicFileOutput(path: path) }, { try GzipFileOutput(path: path) }]
        for make in makers {
            let output = try make()
            try write("new\n", to: output)
            output.abort()
            #expect(try listing(directory) == ["out.csv"])
            #expect(try String(contentsOfFile: path, encoding: .utf8) == "old\n")
            #expect(throws: CSVError.self) { try output.finish() }
            #expect(try String(contentsOfFile: path, encoding: .utf8) == "old\n")
        }
    }
}

@Test func droppingAnUnfinishedOutputRemovesTheTemporaryFile() throws {
    try withTemporaryDirectory { directory in
        let path = directory + "/out.csv"
        try "old\n".write(toFile: path, atomically: false, encoding: .utf8)
        do {
            let plain = try AtomicFileOutput(path: path)
            let gzip = try GzipFileOutput(path: directory + "/out.csv.gz")
            let writer = CSVWriter(output: gzip, bufferSize: 64)
            try write("new\n", to: plain)
            for index in 0..<100 { try writer.writeRow([.value(String(index))]) }
            #expect(try listing(directory).count == 3)
        }
        #expect(try listing(directory) == ["out.csv"])
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "old\n")
    }
}

@Test func missingDirectoriesAreCreated() throws {
    try withTemporaryDirectory { directory in
        let path = directory + "/a/b/c/out.csv.gz"
        let writer = CSVWriter(output: try GzipFileOutput(path: path))
        try writer.writeRow([.text("x")])
        try writer.finish()
        #expect(try Gzip.decompress(readBytes(path)) == Array("x\n".utf8))
    }
}

@Test func pathUnderARegularFileIsAnErrorNamingThePath() throws {
    try withTemporaryDirectory { directory in
        let file = directory + "/plain-file"
        try "x".write(toFile: file, atomically: false, encoding: .utf8)
        let path = file + "/sub/out.csv"
        for make in [{ _ = try AtomicFileOutput(path: path) }, { _ = try GzipFileOutput(path: path) }] as [() throws -> Void] {
            let error = #expect(throws: CSVError.self) { try make() }
            #expect(error?.path == path)
            #expect(error?.kind == .noSuchDirectory)
            #expect(error?.description.contains(path) == true)
            #expect(error?.message.contains("plain-file") == true)
        }
        #expect(try listing(directory) == ["plain-file"])
    }
}

@Test func writeAfterFinishIsAnError() throws {
    try withTemporaryDirectory { directory in
        let output = try AtomicFileOutput(path: directory + "/out.csv")
        try output.finish()
        #expect((#expect(throws: CSVError.self) { try write("late\n", to: output) })?.kind == .finished)
        #expect((#expect(throws: CSVError.self) { try output.finish() })?.kind == .finished)
    }
}

@Test func diskFullErrorNamesThePathAndTheReason() throws {
    let descriptor = open("/dev/full", O_WRONLY | O_CLOEXEC)
    try #require(descriptor >= 0)
    defer { close(descriptor) }
    let bytes = [UInt8](repeating: 65, count: 1000)
    let error = #expect(throws: CSVError.self) {
        try bytes.withUnsafeBytes { buffer in
            try AtomicFile.writeAll(descriptor, buffer, path: "out/export.csv", fileName: "out/.export.csv.tmp-1-x")
        }
    }
    #expect(error?.path == "out/export.csv")
    #expect(error?.kind == .diskFull)
    #expect(error?.message.contains("errno \(ENOSPC)") == true)
    #expect(error?.message.contains(".export.csv.tmp-1-x") == true)
}
