/// Values filled into URL templates (a `for_each` item: the pipeline's "Items are untrusted"),
/// and the origin a URL reaches. Pure, tested directly, as the rest of `HTTPLinks`.
extension HTTPLinks {
    /// The part of a URL a character stands in (RFC 3986 §3).
    public enum URLPart: Sendable, Equatable {
        /// The scheme, the userinfo, the host or the port.
        case authority
        /// The path.
        case path
        /// The query, after `?`.
        case query
        /// The fragment, after `#`.
        case fragment
    }

    /// `template` with every `placeholder` replaced by `value`, encoded for the part of the
    /// URL the placeholder stands in, so that the value can never change the URL's shape:
    ///
    /// - in the path, each `/`-separated piece of `value` is percent-encoded (`pathEncoded`):
    ///   a value such as `owner/repo` stays a path of two segments, and `?`, `#`, `%` or a
    ///   space in it are encoded;
    /// - in the query or the fragment, every byte but the unreserved ones is encoded
    ///   (`queryEncoded`): `&`, `=`, `+`, `/`, `?`, `#`, `%` and spaces included;
    /// - in the scheme or the authority, a value made of unreserved characters only
    ///   (`A-Z a-z 0-9 - . _ ~`) is put in as it is; any other value makes the result nil
    ///   (it would name another host, port or user).
    ///
    /// Where a placeholder stands is read from `template`'s own characters. A template
    /// without a scheme (before its first `:`, which must come before any placeholder) is
    /// a file path, which nothing decodes: the value goes in as it is. (It is the caller's
    /// to refuse values that must not go anywhere, such as dot segments or control characters.)
    public static func filling(_ placeholder: String, with value: String, in template: String) -> String? {
        guard !placeholder.isEmpty, template.contains(placeholder) else { return template }
        guard let colon = template.firstIndex(of: ":"), isScheme(template[..<colon]) else {
            return template.replacingOccurrences(of: placeholder, with: value)
        }
        var part = URLPart.path
        var result = String(template[...colon])
        var rest = template[template.index(after: colon)...]
        if rest.hasPrefix("//") {
            part = .authority
            result += "//"
            rest = rest.dropFirst(2)
        }
        while !rest.isEmpty {
            if rest.hasPrefix(placeholder) {
                switch part {
                case .authority:
                    guard value.utf8.allSatisfy(isUnreserved) else { return nil }
                    result += value
                case .path: result += pathEncoded(value)
                case .query, .fragment: result += queryEncoded(value)
                }
                rest = rest.dropFirst(placeholder.count)
                continue
            }
            let character = rest.removeFirst()
            switch (part, character) {
            case (.authority, "/"): part = .path
            case (.authority, "?"), (.path, "?"): part = .query
            case (.authority, "#"), (.path, "#"), (.query, "#"): part = .fragment
            default: break
            }
            result.append(character)
        }
        return result
    }

    /// `text` for a URL's path: each piece between `/` percent-encoded but for the unreserved
    /// characters, the `/` between them kept (`owner/my repo` → `owner/my%20repo`).
    public static func pathEncoded(_ text: String) -> String {
        text.split(separator: "/", omittingEmptySubsequences: false).map { percentEncoded(String($0)) }.joined(separator: "/")
    }

    /// `text` with its `%XX` escapes decoded (a `+` stays a `+`; invalid escapes stay as they are).
    public static func percentDecodedPath(_ text: String) -> String {
        percentDecoded(Substring(text.replacingOccurrences(of: "+", with: "%2B")))
    }

    /// The scheme, host and port a URL reaches: the scheme and host lowercased (a userinfo
    /// left out, an IPv6 address in its brackets), the port as written or the scheme's
    /// default (80 for http, 443 for https; nil for another scheme without one). Nil for a
    /// URL without an authority (a file path, `file:///…` has an empty host).
    public static func origin(of url: String) -> (scheme: String, host: String, port: Int?)? {
        let reference = URIReference(url)
        guard let scheme = reference.scheme, var authority = reference.authority else { return nil }
        if let at = authority.lastIndex(of: "@") { authority = String(authority[authority.index(after: at)...]) }
        var host = Substring(authority)
        var portText: Substring?
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return nil }
            let after = host[host.index(after: close)...]
            if after.hasPrefix(":") { portText = after.dropFirst() } else if !after.isEmpty { return nil }
            host = host[...close]
        } else if let colon = host.lastIndex(of: ":") {
            portText = host[host.index(after: colon)...]
            host = host[..<colon]
        }
        var port = defaultPort(of: scheme)
        if let portText, !portText.isEmpty {
            guard let written = Int(portText), (0...65535).contains(written) else { return nil }
            port = written
        }
        return (scheme, host.lowercased(), port)
    }

    /// 80 for `http`, 443 for `https`; nil for other schemes.
    public static func defaultPort(of scheme: String) -> Int? {
        switch scheme.lowercased() {
        case "http": 80
        case "https": 443
        default: nil
        }
    }

    /// Whether `text` is an RFC 3986 scheme: a letter, then letters, digits, `+`, `-` or `.`.
    private static func isScheme(_ text: Substring) -> Bool {
        guard let first = text.first, first.isASCII, first.isLetter else { return false }
        return text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "+" || $0 == "-" || $0 == ".") }
    }
}
