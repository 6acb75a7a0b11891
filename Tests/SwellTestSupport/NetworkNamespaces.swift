import Foundation

/// Hosts for tests that need several machines: each host a Linux network namespace
/// of its own, joined by a bridge in one more namespace (the "switch"), to which this
/// process's namespace is linked too, so its in-process servers are reachable from
/// every host. Addresses are link-local (169.254.S.0/24, one subnet per network,
/// picked unused here); nothing is routed beyond these namespaces.
///
/// Namespaces are named `swell-<pid>-<n>-…` and removed by `remove()` (call it in a
/// `defer`); the namespaces of test processes that died without removing theirs (no
/// live `<pid>`) are removed when the next network is made. Needs root: `init` throws
/// `Refused` when the machine will not give namespaces, so a test can say so and fall back.
///
/// Thread safety: `@unchecked Sendable` because every field is set once in `init`,
/// except `removed`, which is behind `lock`.
public final class NetworkNamespaces: @unchecked Sendable {
    /// One host: a namespace with one link (`eth0`) to the switch.
    public struct Host: Sendable {
        /// The namespace's name, for `ip netns exec`.
        public let namespace: String
        /// Its IPv4 address on the switch.
        public let address: String
        /// The command prefix that runs a program on this host.
        public var launcher: [String] { [NetworkNamespaces.ipPath, "netns", "exec", namespace] }
    }

    /// Why the machine gave no namespaces (not root, `ip netns add` refused, no `ip`).
    public struct Refused: Error, CustomStringConvertible {
        public let description: String
    }

    /// The hosts, in the order asked for.
    public let hosts: [Host]
    /// This process's address on the switch (bind servers the hosts must reach here).
    public let localAddress: String
    private let switchNamespace: String
    private let lock = NSLock()
    private var removed = false

    private static let ipPath = ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"]
        .first { FileManager.default.isExecutableFile(atPath: $0) } ?? "/usr/sbin/ip"
    private static let creation = NSLock()
    nonisolated(unsafe) private static var made = 0

    /// Makes `count` hosts and links this process's namespace to them.
    ///
    /// Throws `Refused` when namespaces cannot be had here; any other failure while
    /// wiring them removes what was made and throws `NetworkError` naming the command.
    public init(hosts count: Int) throws {
        guard FileManager.default.isExecutableFile(atPath: Self.ipPath) else { throw Refused(description: "ip (iproute2) is not installed") }
        guard getuid() == 0 else { throw Refused(description: "network namespaces need root (uid is \(getuid()))") }
        Self.creation.lock()
        defer { Self.creation.unlock() }
        Self.removeLeftovers()
        Self.made += 1
        let prefix = "swell-\(getpid())-\(Self.made)"
        switchNamespace = "\(prefix)-switch"
        do {
            try Self.ip(["netns", "add", switchNamespace])
        } catch {
            throw Refused(description: "ip netns add refused: \(error)")
        }
        let subnet = Self.unusedSubnet()
        localAddress = "169.254.\(subnet).1"
        hosts = (0..<count).map { Host(namespace: "\(prefix)-h\($0)", address: "169.254.\(subnet).\(10 + $0)") }
        do {
            try wire(rootInterface: "sw\(getpid())n\(Self.made)")
        } catch {
            remove()
            throw error
        }
    }

    deinit { remove() }

    private func wire(rootInterface: String) throws {
        let bridge = ["-n", switchNamespace]
        try Self.ip(bridge + ["link", "add", "br0", "type", "bridge"])
        try Self.ip(bridge + ["link", "set", "br0", "up"])
        // This process's end: a veth whose peer is a port of the bridge.
        try Self.ip(bridge + ["link", "add", "local", "type", "veth", "peer", "name", rootInterface, "netns", "\(getpid())"])
        try Self.ip(bridge + ["link", "set", "local", "master", "br0", "up"])
        try Self.ip(["addr", "add", "\(localAddress)/24", "dev", rootInterface])
        try Self.ip(["link", "set", rootInterface, "up"])
        for (index, host) in hosts.enumerated() {
            try Self.ip(["netns", "add", host.namespace])
            try Self.ip(bridge + ["link", "add", "h\(index)", "type", "veth", "peer", "name", "eth0", "netns", host.namespace])
            try Self.ip(bridge + ["link", "set", "h\(index)", "master", "br0", "up"])
            try Self.ip(["-n", host.namespace, "addr", "add", "\(host.address)/24", "dev", "eth0"])
            try Self.ip(["-n", host.namespace, "link", "set", "eth0", "up"])
            try Self.ip(["-n", host.namespace, "link", "set", "lo", "up"])
        }
    }

    /// Takes `host`'s link down: its packets stop, and nobody is told (no FIN, no RST).
    public func cutLink(of host: Host) throws {
        try Self.ip(["-n", host.namespace, "link", "set", "eth0", "down"])
    }

    /// Ends what still runs in the namespaces and removes them (and with the switch,
    /// this process's link to it). Safe to call more than once.
    public func remove() {
        let already = lock.withLock { () -> Bool in
            defer { removed = true }
            return removed
        }
        guard !already else { return }
        for namespace in hosts.map(\.namespace) + [switchNamespace] {
            Self.removeNamespace(namespace)
        }
    }

    /// Kills the processes left in `namespace` (started by the tests that made it) and deletes it.
    private static func removeNamespace(_ namespace: String) {
        let pids = (try? ip(["netns", "pids", namespace])) ?? ""
        for pid in pids.split(whereSeparator: \.isNewline).compactMap({ pid_t($0) }) {
            kill(pid, SIGKILL)
        }
        _ = try? ip(["netns", "del", namespace])
    }

    /// Removes the namespaces `swell-<pid>-…` whose `<pid>` is no live process.
    private static func removeLeftovers() {
        let names = ((try? ip(["netns", "list"])) ?? "").split(whereSeparator: \.isNewline).compactMap { $0.split(separator: " ").first }
        for name in names {
            let parts = name.split(separator: "-")
            guard parts.count >= 3, parts[0] == "swell", let owner = pid_t(parts[1]), kill(owner, 0) != 0, errno == ESRCH else { continue }
            removeNamespace(String(name))
        }
    }

    /// A third octet S with no 169.254.S.x address in this namespace (169 is left alone: 169.254.169.254 is the cloud's metadata address).
    private static func unusedSubnet() -> Int {
        let shown = (try? ip(["-4", "-o", "addr", "show"])) ?? ""
        let used = Set(shown.split(separator: " ").compactMap { word -> Int? in
            let octets = word.split(separator: "/")[0].split(separator: ".")
            guard octets.count == 4, octets[0] == "169", octets[1] == "254" else { return nil }
            return Int(octets[2])
        })
        return (100...199).first { $0 != 169 && !used.contains($0) } ?? 199
    }

    /// Runs `ip arguments`; its standard output, or `NetworkError` with what it printed.
    @discardableResult
    private static func ip(_ arguments: [String]) throws -> String {
        // Spawned, not run by `Process` with pipes: see `SpawnedProgram`.
        let outcome = try SpawnedProgram.run([ipPath] + arguments, separateErrors: true)
        guard outcome.exitCode == 0 else {
            throw NetworkError(description: "ip \(arguments.joined(separator: " ")) failed (\(outcome.exitCode.map(String.init) ?? "signal")): \(outcome.errors)")
        }
        let printed = outcome.output
        return printed
    }
}

/// A command that wires the test network failed.
public struct NetworkError: Error, CustomStringConvertible {
    public let description: String
}
