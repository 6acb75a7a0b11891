import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Runs a program to its end with `posix_spawn` and `waitpid`, its output in files, for the
/// helpers that start the tests' servers and networks.
///
/// Not Foundation's `Process` with pipes: a pipe reaches end of file only when every process
/// holding its write end is gone, and any program spawned meanwhile by another test (an exit
/// test's child, a server `pg_ctl start` leaves running) inherits it, so reading to the end
/// waited for that one too — seen as a hang of `ip` under the many-hosts test beside an exit
/// test. `Process` also learns of the exit from a descriptor such a program inherits.
public enum SpawnedProgram {
    /// What a finished program left: its wait status and what it printed.
    public struct Outcome: Sendable {
        /// The exit code, nil when a signal ended it.
        public let exitCode: Int32?
        /// Standard output (and standard error when it was not asked for apart).
        public let output: String
        /// Standard error, when asked for apart.
        public let errors: String
    }

    /// Runs `argv` (`argv[0]` an absolute path) with standard input from /dev/null; standard
    /// error goes with standard output unless `separateErrors`.
    public static func run(_ argv: [String], separateErrors: Bool = false) throws -> Outcome {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("swell-spawn-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let outputPath = folder.appendingPathComponent("out").path
        let errorsPath = folder.appendingPathComponent("err").path
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        if separateErrors {
            posix_spawn_file_actions_addopen(&actions, 2, errorsPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        } else {
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        }
        var cArguments = argv.map { strdup($0) } + [nil]
        defer { cArguments.forEach { free($0) } }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, argv[0], &actions, nil, &cArguments, environ)
        guard spawned == 0 else { throw SpawnError(description: "\(argv[0]) could not start: \(String(cString: strerror(spawned)))") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        let exited = status & 0x7f == 0
        return Outcome(exitCode: exited ? (status >> 8) & 0xff : nil,
                       output: (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "",
                       errors: separateErrors ? (try? String(contentsOfFile: errorsPath, encoding: .utf8)) ?? "" : "")
    }
}

/// A program could not be started.
public struct SpawnError: Error, CustomStringConvertible {
    public let description: String
}
