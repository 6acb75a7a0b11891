import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A test server written as a script (`Tests/servers/`), run by Debian's `/usr/bin/python3`
/// with the modules `scripts/setup.sh` installs (or by the Python of the virtual environment
/// it makes, `.build/test-python`, for servers from PyPI), on 127.0.0.1: its port and pid read from
/// the first line it prints (`PORT <n> PID <pid>`); killed when the value goes or at
/// `stop()`, and gone by itself when the test process is.
///
/// It is started in the background of a shell that exits at once, and closes the
/// descriptors it inherited: a long-lived child of the test process would otherwise hold
/// other tests' pipes (Foundation's `Process` lets a child spawned meanwhile inherit them)
/// and those tests would wait for it.
public final class ScriptServer: @unchecked Sendable {
    /// `@unchecked Sendable`: `pid` and `port` are set once in `init`.
    private let pid: pid_t
    /// The port it listens on.
    public let port: Int
    /// Where its standard error goes.
    public let log: URL

    /// `http://127.0.0.1:PORT`.
    public var baseURL: String { "http://127.0.0.1:\(port)" }

    /// Which Python runs a script.
    public enum Interpreter: Sendable {
        /// Debian's `/usr/bin/python3`.
        case system
        /// `.build/test-python/bin/python` (`scripts/setup.sh` makes it).
        case testEnvironment
    }

    /// Starts `Tests/servers/<script>` with `arguments`.
    public init(script: String, arguments: [String], interpreter: Interpreter = .system) throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        let path = root.appendingPathComponent("servers").appendingPathComponent(script).path
        let python = switch interpreter {
        case .system: "/usr/bin/python3"
        case .testEnvironment: root.deletingLastPathComponent().appendingPathComponent(".build/test-python/bin/python").path
        }
        log = FileManager.default.temporaryDirectory.appendingPathComponent("swell-\(script)-\(UUID().uuidString).log")
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/sh")
        shell.arguments = ["-c", "exec 2>\"$0\"; \"$@\" &", log.path, python, path] + arguments
        shell.environment = ProcessInfo.processInfo.environment.merging(["SWELL_TEST_PID": String(getpid())]) { _, new in new }
        let output = Pipe()
        shell.standardOutput = output
        shell.standardInput = FileHandle.nullDevice
        try shell.run()
        shell.waitUntilExit()
        // The first line says the port; reading blocks until the script printed it or ended.
        var line: [UInt8] = []
        let handle = output.fileHandleForReading
        while line.last != UInt8(ascii: "\n"), let byte = try handle.read(upToCount: 1), !byte.isEmpty {
            line += byte
        }
        let words = String(decoding: line, as: UTF8.self).split(separator: " ")
        guard words.count == 4, words[0] == "PORT", let port = Int(words[1]), let pid = pid_t(words[3].trimmingCharacters(in: .whitespacesAndNewlines)) else {
            let said = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            throw ServerError("\(script) did not start (run scripts/setup.sh to install what it needs): \(said)")
        }
        self.port = port
        self.pid = pid
    }

    /// Stops the script.
    public func stop() {
        kill(pid, SIGKILL)
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: log)
    }
}
