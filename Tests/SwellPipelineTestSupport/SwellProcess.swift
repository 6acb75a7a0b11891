import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// Runs the built `swell` binary in a folder, as users and CI do, and collects what it printed.
package struct SwellProcess {
    package struct Outcome {
        package var status: Int32
        package var stdout: String
        package var stderr: String
    }

    /// The `swell` executable beside the test bundle in the build folder.
    package static var executable: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("swell")
    }

    package static func run(_ arguments: [String], in directory: URL, environment: [String: String] = [:]) throws -> Outcome {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.currentDirectoryURL = directory
        var env = ProcessInfo.processInfo.environment
        env["SWELL_CONCURRENCY_DEBUG"] = "1"
        for (key, value) in environment { env[key] = value }
        process.environment = env
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Read both pipes to the end before waiting, so a full pipe never blocks the child.
        let group = DispatchGroup()
        let collected = Collected()
        group.enter()
        DispatchQueue.global().async {
            collected.setErr(err.fileHandleForReading.readDataToEndOfFile())
            group.leave()
        }
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        process.waitUntilExit()
        return Outcome(status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
                       stderr: String(decoding: collected.err, as: UTF8.self))
    }
}

/// Holds stderr read on another queue.
/// `@unchecked Sendable`: its mutable state is only touched under `lock`.
private final class Collected: @unchecked Sendable {
    private let lock = NSLock()
    private var _err = Data()
    func setErr(_ data: Data) { lock.withLock { _err = data } }
    var err: Data { lock.withLock { _err } }
}

/// A folder to run `swell` in, with the repository's fixtures copied in; removed afterwards.
/// `@unchecked Sendable`: its one field, `url`, is set once in `init`.
package final class Workspace: @unchecked Sendable {
    package static let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    package let url: URL

    package init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("swell-e2e-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: Self.repositoryRoot.appendingPathComponent("fixtures"), to: url.appendingPathComponent("fixtures"))
        try FileManager.default.copyItem(at: Self.repositoryRoot.appendingPathComponent("pipelines"), to: url.appendingPathComponent("pipelines"))
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    package func path(_ relative: String) -> String { url.appendingPathComponent(relative).path }

    /// `text` through `/bin/gzip -c`: a gzip stream another program wrote.
    package static func gzip(_ text: String) throws -> [UInt8] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/gzip")
        process.arguments = ["-c"]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        input.fileHandleForWriting.write(Data(text.utf8))
        try input.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return [UInt8](data)
    }

    package func write(_ relative: String, _ text: String) throws {
        let file = url.appendingPathComponent(relative)
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try text.write(to: file, atomically: true, encoding: .utf8)
    }

    package func read(_ relative: String) throws -> String {
        try String(contentsOfFile: path(relative), encoding: .utf8)
    }

    package func run(_ arguments: String..., environment: [String: String] = [:]) throws -> SwellProcess.Outcome {
        try SwellProcess.run(arguments, in: url, environment: environment)
    }

    package func run(_ arguments: [String], environment: [String: String] = [:]) throws -> SwellProcess.Outcome {
        try SwellProcess.run(arguments, in: url, environment: environment)
    }

    /// The parsed run report.
    package func report(_ relative: String = "out/report.json") throws -> [String: Any] {
        let data = try Data(contentsOf: url.appendingPathComponent(relative))
        return try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
    }
}

/// A `swell` run started in the background, whose stderr a test reads as it comes
/// (to act at a known moment: after a page was fetched, while it waits for a lock).
package final class RunningSwell {
    package let process = Process()
    private let errors = Pipe()
    private let exited = DispatchSemaphore(value: 0)
    package private(set) var stderr = ""

    /// Starts `swell arguments`, after `launcher` when one is given (e.g. `ip netns exec NAME`,
    /// which execs, so the process keeps its pid).
    package init(_ arguments: [String], in directory: URL, environment: [String: String] = [:], launcher: [String] = []) throws {
        if let program = launcher.first {
            process.executableURL = URL(fileURLWithPath: program)
            process.arguments = launcher.dropFirst() + [SwellProcess.executable.path] + arguments
        } else {
            process.executableURL = SwellProcess.executable
            process.arguments = arguments
        }
        let exited = self.exited
        process.terminationHandler = { _ in exited.signal() }
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        }
        process.currentDirectoryURL = directory
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
    }

    /// Reads stderr until `text` has appeared `count` times (or stderr ends); true when it did.
    @discardableResult
    package func waitForStderr(_ text: String, count: Int = 1) -> Bool {
        while stderr.components(separatedBy: text).count <= count {
            let chunk = errors.fileHandleForReading.availableData
            if chunk.isEmpty { return false }
            stderr += String(decoding: chunk, as: UTF8.self)
        }
        return true
    }

    /// Waits at most `seconds` for the process to end, kills it (SIGKILL) if it has not, and
    /// reads the rest of stderr; whether it ended by itself. (Stderr is not read while waiting:
    /// a run that prints more than a pipe holds would block.)
    package func finish(within seconds: Double) -> Bool {
        let ended = exited.wait(timeout: .now() + seconds) == .success
        if ended { exited.signal() } else { kill() }
        finish()
        return ended
    }

    /// Kills the process with SIGKILL, unless it has ended.
    package func kill() {
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
    }

    /// Reads the rest of stderr and waits for the process to end.
    package func finish() {
        stderr += String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
    }
}
