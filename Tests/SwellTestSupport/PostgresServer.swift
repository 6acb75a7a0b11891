import Foundation

/// A throwaway PostgreSQL 15 server for the tests, from Debian's packages
/// (`scripts/setup.sh` installs them): `initdb --no-sync` into a temporary
/// folder (as the `postgres` user when the tests run as root: PostgreSQL
/// refuses root), started with `pg_ctl` on a free 127.0.0.1 port, its socket in
/// that folder, `fsync=off`; stopped and removed when the test process exits
/// (also after failed tests), or by `stop()`. A server may instead be started by a
/// launcher (`ip netns exec NAME`: inside a network namespace) on another address.
public final class PostgresServer: @unchecked Sendable {
    /// `@unchecked Sendable`: every field is set once in `init` (`stopped` behind `lock`).
    public let directory: URL
    public let port: Int
    public let user = "swell"
    /// The address the server listens on (`listen_addresses`), 127.0.0.1 by default.
    public let host: String
    /// The command prefix `pg_ctl start` runs after (e.g. `ip netns exec NAME`), or none.
    public let launcher: [String]
    private let binaries: URL
    private let lock = NSLock()
    private var stopped = false

    /// The server every test of the process shares, started on first use.
    public static let shared: Result<PostgresServer, any Error> = {
        let result = Result { try PostgresServer() }
        if case .success(let server) = result {
            PostgresServer.running = server
            atexit { PostgresServer.running?.stop() }
        }
        return result
    }()
    nonisolated(unsafe) private static var running: PostgresServer?

    /// A libpq URL for `database`, without a password.
    public func url(database: String = "postgres") -> String {
        "postgresql://\(user)@\(host):\(port)/\(database)"
    }

    /// A server of its own (stopped and removed when the value goes, or at `stop()`),
    /// listening on `host`, started after `launcher` when one is given: with `ip netns exec
    /// NAME`, inside a namespace the caller made and gave `host` to (the port is one free
    /// in this process's namespace; in a fresh one every port is). With a `password`, TCP
    /// logins need it (SCRAM); without one, every login is trusted.
    public init(launcher: [String] = [], host: String = "127.0.0.1", password: String? = nil) throws {
        guard let bin = Self.binaries() else { throw ServerError("PostgreSQL's initdb and pg_ctl are not installed (run scripts/setup.sh)") }
        binaries = bin
        self.launcher = launcher
        self.host = host
        Self.removeLeftovers(binaries: bin)
        directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("swell-pg-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: directory.path)
        try String(getpid()).write(to: directory.appendingPathComponent("owner.pid"), atomically: true, encoding: .utf8)
        port = try Self.freePort()
        let data = directory.appendingPathComponent("data").path
        var authentication = ["--auth=trust"]
        if let password {
            let file = directory.appendingPathComponent("password").path
            try password.write(toFile: file, atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file)
            authentication = ["--auth-local=trust", "--auth-host=scram-sha-256", "--pwfile=\(file)"]
        }
        try run("initdb", ["-D", data, "--no-sync", "-U", user, "-E", "UTF8", "--locale=C"] + authentication)
        if host != "127.0.0.1" {
            // initdb trusts only loopback clients; trust the subnets of `host`'s links too.
            let rules = try FileHandle(forWritingTo: URL(fileURLWithPath: data).appendingPathComponent("pg_hba.conf"))
            defer { try? rules.close() }
            try rules.seekToEnd()
            try rules.write(contentsOf: Data("host all all samenet \(password == nil ? "trust" : "scram-sha-256")\n".utf8))
        }
        try start()
    }

    /// Starts the server (again, after `crash()`).
    public func start() throws {
        let options = "-p \(port) -k \(directory.path) -c listen_addresses=\(host) -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=400"
        try run("pg_ctl", ["-D", directory.appendingPathComponent("data").path, "-l", directory.appendingPathComponent("log").path,
                           "-w", "-t", "60", "-o", options, "start"],
                launcher: launcher)
    }

    /// Stops the server the way a crash or a pulled plug would (`pg_ctl stop -m immediate`), keeping its data.
    public func crash() throws {
        try run("pg_ctl", ["-D", directory.appendingPathComponent("data").path, "-m", "immediate", "-w", "stop"])
    }

    deinit { stop() }

    /// Stops the server at once and removes its folder.
    public func stop() {
        let already = lock.withLock { () -> Bool in
            defer { stopped = true }
            return stopped
        }
        guard !already else { return }
        try? run("pg_ctl", ["-D", directory.appendingPathComponent("data").path, "-m", "immediate", "-w", "stop"])
        try? FileManager.default.removeItem(at: directory)
    }

    /// Runs one of PostgreSQL's programs, as `postgres` when this process is root,
    /// after `launcher` (e.g. `ip netns exec NAME`) when one is given.
    ///
    /// Spawned and reaped by `SpawnedProgram`, not with Foundation's `Process`: `Process`
    /// learns of the child's exit from a socket the child inherits, and the server
    /// `pg_ctl start` leaves running inherits it too, so `waitUntilExit` would wait for the
    /// server to stop. Output goes to a file for the same reason.
    private func run(_ program: String, _ arguments: [String], launcher: [String] = []) throws {
        let path = binaries.appendingPathComponent(program).path
        let argv = launcher + (getuid() == 0 ? ["/usr/sbin/runuser", "-u", "postgres", "--", path] + arguments : [path] + arguments)
        let outcome = try SpawnedProgram.run(argv)
        guard outcome.exitCode == 0 else {
            throw ServerError("\(program) failed (\(outcome.exitCode.map { "exit \($0)" } ?? "a signal")): \(outcome.output)")
        }
    }

    /// Stops and removes the servers of test processes that died without stopping
    /// theirs (a crash skips `atexit`): a folder whose `owner.pid` names no live process.
    private static func removeLeftovers(binaries: URL) {
        let temporary = URL(fileURLWithPath: NSTemporaryDirectory())
        let names = (try? FileManager.default.contentsOfDirectory(atPath: temporary.path)) ?? []
        for name in names where name.hasPrefix("swell-pg-") {
            let folder = temporary.appendingPathComponent(name)
            guard let text = try? String(contentsOf: folder.appendingPathComponent("owner.pid"), encoding: .utf8),
                  let owner = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)), kill(owner, 0) != 0, errno == ESRCH else { continue }
            let leftover = PostgresServer(leftover: folder, binaries: binaries)
            leftover.stop()
        }
    }

    private init(leftover directory: URL, binaries: URL) {
        self.directory = directory
        self.binaries = binaries
        port = 0
        host = "127.0.0.1"
        launcher = []
    }

    private static func binaries() -> URL? {
        let root = URL(fileURLWithPath: "/usr/lib/postgresql")
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? []
        for version in versions.sorted(by: >) {
            let bin = root.appendingPathComponent(version).appendingPathComponent("bin")
            if FileManager.default.isExecutableFile(atPath: bin.appendingPathComponent("pg_ctl").path) { return bin }
        }
        return nil
    }

    /// A TCP port nothing listens on now (the kernel picks one for a bound socket).
    private static func freePort() throws -> Int {
        let socket = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw ServerError("socket() failed") }
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { throw ServerError("bind() failed") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

public struct ServerError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
