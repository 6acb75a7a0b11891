import SwellHTTP

/// A key of `hosts:` (Pipeline file reference version 4): `scheme://host[:port]`, as in the
/// sources' URLs, or a bare host. It says which requests a `HostBudget` holds:
///
/// - a bare host (`api.github.com`): every request to that host, whatever its scheme and port;
/// - `scheme://host` (`https://api.github.com`): requests with that scheme to the scheme's
///   default port (80 for http, 443 for https);
/// - `scheme://host:port`: requests with that scheme to that port.
///
/// Hosts compare without regard to case; the scheme is `http` or `https`.
public struct HostKey: Sendable, Hashable, CustomStringConvertible {
    /// `http` or `https`; nil for a bare host.
    public var scheme: String?
    /// The host name or address, lowercased (an IPv6 address in its brackets, `[::1]`).
    public var host: String
    /// The port; nil for the scheme's default port (with a scheme) or any port (a bare host).
    /// A scheme's default port written out (`https://h:443`) is read as nil: the same key.
    public var port: Int?

    /// A key for `host` (lowercased here) with `scheme` and `port`.
    public init(scheme: String?, host: String, port: Int? = nil) {
        self.scheme = scheme?.lowercased()
        self.host = host.lowercased()
        self.port = (scheme.flatMap(HTTPLinks.defaultPort(of:)) == port) ? nil : port
    }

    /// Reads `scheme://host[:port]` or a bare host; nil when `text` is neither (another scheme,
    /// a path, a query, a user, a port without a scheme, a host that is not a name or address).
    public init?(_ text: String) {
        var rest = Substring(text)
        var scheme: String?
        if let separator = rest.range(of: "://") {
            scheme = rest[..<separator.lowerBound].lowercased()
            guard scheme == "http" || scheme == "https" else { return nil }
            rest = rest[separator.upperBound...]
        }
        var hostText = rest
        var port: Int?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { return nil }
            hostText = rest[...close]
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":"), let written = Self.port(after.dropFirst()) else { return nil }
                port = written
            }
            guard hostText.dropFirst().dropLast().allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }), hostText.count > 2 else { return nil }
        } else {
            if let colon = rest.firstIndex(of: ":") {
                hostText = rest[..<colon]
                guard let written = Self.port(rest[rest.index(after: colon)...]) else { return nil }
                port = written
            }
            guard Self.isHostName(hostText) else { return nil }
        }
        guard scheme != nil || port == nil else { return nil }   // a port needs its scheme: `http://host:8080`
        self.init(scheme: scheme, host: String(hostText), port: port)
    }

    /// A port number, 1…65535, of digits only.
    private static func port(_ text: Substring) -> Int? {
        guard !text.isEmpty, text.allSatisfy(\.isASCII), text.allSatisfy(\.isNumber), let port = Int(text), (1...65535).contains(port) else { return nil }
        return port
    }

    /// Dot-separated labels of letters, digits, `-` and `_` (an IPv4 address is one too).
    private static func isHostName(_ text: Substring) -> Bool {
        let labels = text.split(separator: ".", omittingEmptySubsequences: false)
        return !text.isEmpty && labels.allSatisfy { label in
            !label.isEmpty && label.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }
        }
    }

    /// Whether a request to `url` is one this key holds (see the type's rules).
    public func matches(url: String) -> Bool {
        guard let origin = HTTPLinks.origin(of: url), origin.host == host else { return false }
        guard let scheme else { return true }
        return origin.scheme == scheme && origin.port == (port ?? HTTPLinks.defaultPort(of: scheme))
    }

    /// How narrowly it picks requests: 0 a bare host, 1 `scheme://host`, 2 with a port. The
    /// most specific matching key holds a request (`PipelineFile.hostBudget(for:)`).
    public var specificity: Int { scheme == nil ? 0 : port == nil ? 1 : 2 }

    /// The key as a file would write it, after reading: `https://api.github.com:8443`, `api.github.com`.
    public var description: String {
        guard let scheme else { return host }
        return "\(scheme)://\(host)" + (port.map { ":\($0)" } ?? "")
    }
}
