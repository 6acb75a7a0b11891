/// Pagination helpers (pure, tested directly).
///
/// URLs are handled as text after RFC 3986: nothing is fetched, decoded or normalised
/// beyond what reference resolution asks for.
public enum HTTPLinks {
    /// The rel="next" target of an RFC 8288 Link header value, resolved against `base`; nil if none.
    ///
    /// Several link-values may stand in one header, `rel` may list several relation types
    /// (`rel="next last"`), and parameters may be tokens or quoted strings with commas inside.
    public static func nextLink(in linkHeader: String, base: String) -> String? {
        var parser = LinkHeaderParser(linkHeader)
        for link in parser.links() where link.relations.contains("next") {
            return resolve(link.target, against: base)
        }
        return nil
    }

    /// Resolves a reference (absolute URL, absolute path, relative path, or for file pages a sibling file name) against a base URL or plain path.
    ///
    /// Against a URL (a base with a scheme) this is RFC 3986 §5.2 resolution. Against a plain
    /// path the reference is a path too: an absolute one replaces the base, a relative one is taken
    /// from the base's directory (`fixtures/a/page-1.json` + `page-2.json` → `fixtures/a/page-2.json`).
    /// Returns nil for an empty reference, or a network-path reference (`//host/x`) against a plain path.
    public static func resolve(_ reference: String, against base: String) -> String? {
        let reference = String(reference.trimmingWhitespace())
        guard !reference.isEmpty else { return nil }
        let ref = URIReference(reference)
        if ref.scheme != nil { return ref.composed(removingDots: true) }
        let baseParts = URIReference(base)
        guard baseParts.scheme != nil else {
            guard ref.authority == nil else { return nil }
            if reference.hasPrefix("/") { return removeDotSegments(reference, keepingLeadingParents: false) }
            return removeDotSegments(directory(of: base) + reference, keepingLeadingParents: true)
        }
        var target = URIReference(scheme: baseParts.scheme)
        if ref.authority != nil {
            target.authority = ref.authority
            target.path = removeDotSegments(ref.path, keepingLeadingParents: false)
            target.query = ref.query
        } else {
            target.authority = baseParts.authority
            if ref.path.isEmpty {
                target.path = baseParts.path
                target.query = ref.query ?? baseParts.query
            } else {
                if ref.path.hasPrefix("/") {
                    target.path = removeDotSegments(ref.path, keepingLeadingParents: false)
                } else if baseParts.authority != nil && baseParts.path.isEmpty {
                    target.path = removeDotSegments("/" + ref.path, keepingLeadingParents: false)
                } else {
                    target.path = removeDotSegments(directory(of: baseParts.path) + ref.path, keepingLeadingParents: false)
                }
                target.query = ref.query
            }
        }
        target.fragment = ref.fragment
        return target.composed(removingDots: false)
    }

    /// `url` with query parameter `name` set to `value` (replacing an existing one), percent-encoded.
    ///
    /// The parameter keeps the place of its first occurrence (later ones are dropped) or is
    /// appended; other parameters and the fragment are left as they are. Name and value are
    /// encoded so that only unreserved characters (`A-Z a-z 0-9 - . _ ~`) stay literal.
    public static func setting(query name: String, to value: String, in url: String) -> String {
        var head = Substring(url)
        var fragment: Substring? = nil
        if let hash = head.firstIndex(of: "#") {
            fragment = head[head.index(after: hash)...]
            head = head[..<hash]
        }
        var pairs: [Substring] = []
        if let mark = head.firstIndex(of: "?") {
            pairs = head[head.index(after: mark)...].split(separator: "&", omittingEmptySubsequences: true)
            head = head[..<mark]
        }
        let encodedName = percentEncoded(name)
        let pair = Substring(encodedName + "=" + percentEncoded(value))
        var replaced = false
        pairs = pairs.compactMap { existing in
            let existingName = existing.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            guard percentDecoded(existingName) == name else { return existing }
            if replaced { return nil }
            replaced = true
            return pair
        }
        if !replaced { pairs.append(pair) }
        var result = String(head) + "?" + pairs.joined(separator: "&")
        if let fragment { result += "#" + fragment }
        return result
    }
}

extension HTTPLinks {
    /// `fields` as an `application/x-www-form-urlencoded` body: `name=value` pairs joined by
    /// `&`, each byte but the unreserved ones percent-encoded and a space written `+`.
    public static func formEncoded(_ fields: [(name: String, value: String)]) -> String {
        fields.map { formEncoded($0.name) + "=" + formEncoded($0.value) }.joined(separator: "&")
    }

    /// `text` as `setting(query:to:in:)` writes it in a query: every byte but the unreserved
    /// ones percent-encoded.
    public static func queryEncoded(_ text: String) -> String {
        percentEncoded(text)
    }

    /// One name or value, form-encoded (RFC 6749 appendix B; also how §2.3.1 encodes client
    /// credentials before HTTP Basic).
    public static func formEncoded(_ text: String) -> String {
        String(percentEncoded(text, keeping: [0x20]).map { $0 == " " ? "+" : $0 })
    }

    /// Percent-encodes every byte of the UTF-8 form except unreserved characters and those in `keeping`.
    static func percentEncoded(_ text: String, keeping: Set<UInt8> = []) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            if isUnreserved(byte) || keeping.contains(byte) {
                out.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                out += "%" + String(byte >> 4, radix: 16, uppercase: true) + String(byte & 0xF, radix: 16, uppercase: true)
            }
        }
        return out
    }

    /// Whether `byte` is an RFC 3986 unreserved character: `A-Z a-z 0-9 - . _ ~`.
    static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
             UInt8(ascii: "_"), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }

    /// Decodes `%XX` escapes and `+` (a space in form-encoded queries); invalid escapes stay as they are.
    static func percentDecoded(_ text: Substring) -> String {
        var bytes: [UInt8] = []
        var utf8 = Array(text.utf8)[...]
        while let byte = utf8.popFirst() {
            if byte == UInt8(ascii: "%"), utf8.count >= 2,
               let high = hexValue(utf8[utf8.startIndex]), let low = hexValue(utf8[utf8.startIndex + 1]) {
                bytes.append(high << 4 | low)
                utf8 = utf8.dropFirst(2)
            } else {
                bytes.append(byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// The path up to and including its last `/`; empty when there is none.
    private static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "" }
        return String(path[...slash])
    }

    /// RFC 3986 §5.2.4. For relative plain paths `keepingLeadingParents` keeps `..` that climb
    /// above the start (`../x` stays `../x`); URL paths drop them as the RFC says.
    static func removeDotSegments(_ path: String, keepingLeadingParents: Bool) -> String {
        let absolute = path.hasPrefix("/")
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        var output: [Substring] = []
        var leadingParents = 0
        for (index, segment) in segments.enumerated() {
            let isLast = index == segments.count - 1
            if absolute && index == 0 { continue }
            switch segment {
            case ".":
                if isLast { output.append("") }
            case "..":
                if output.popLast() == nil, keepingLeadingParents, !absolute { leadingParents += 1 }
                if isLast { output.append("") }
            default:
                output.append(segment)
            }
        }
        let body = (Array(repeating: Substring(".."), count: leadingParents) + output).joined(separator: "/")
        return absolute ? "/" + body : body
    }
}

/// The five parts of a URI reference (RFC 3986 §3), split without validation.
struct URIReference {
    var scheme: String?
    var authority: String?
    var path = ""
    var query: String?
    var fragment: String?

    init(scheme: String?) {
        self.scheme = scheme
    }

    init(_ text: String) {
        var rest = Substring(text)
        if let hash = rest.firstIndex(of: "#") {
            fragment = String(rest[rest.index(after: hash)...])
            rest = rest[..<hash]
        }
        if let mark = rest.firstIndex(of: "?") {
            query = String(rest[rest.index(after: mark)...])
            rest = rest[..<mark]
        }
        if let colon = rest.firstIndex(of: ":"), Self.isScheme(rest[..<colon]) {
            scheme = rest[..<colon].lowercased()
            rest = rest[rest.index(after: colon)...]
        }
        if rest.hasPrefix("//") {
            let afterSlashes = rest.index(rest.startIndex, offsetBy: 2)
            let end = rest[afterSlashes...].firstIndex(of: "/") ?? rest.endIndex
            authority = String(rest[afterSlashes..<end])
            rest = rest[end...]
        }
        path = String(rest)
    }

    private static func isScheme(_ text: Substring) -> Bool {
        guard let first = text.first, first.isASCII, first.isLetter else { return false }
        return text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "+" || $0 == "-" || $0 == ".") }
    }

    func composed(removingDots: Bool) -> String {
        var out = ""
        if let scheme { out += scheme + ":" }
        if let authority { out += "//" + authority }
        out += removingDots ? HTTPLinks.removeDotSegments(path, keepingLeadingParents: false) : path
        if let query { out += "?" + query }
        if let fragment { out += "#" + fragment }
        return out
    }
}

/// Reads an RFC 8288 Link header value: `<target>; param=value; rel="a b", <target2>; …`.
struct LinkHeaderParser {
    struct Link {
        var target: String
        var relations: [String]
    }

    private var rest: Substring

    init(_ text: String) {
        rest = Substring(text)
    }

    mutating func links() -> [Link] {
        var links: [Link] = []
        while true {
            skip { $0 == " " || $0 == "\t" || $0 == "," }
            guard rest.first == "<", let close = rest.firstIndex(of: ">") else { return links }
            let target = String(rest[rest.index(after: rest.startIndex)..<close])
            rest = rest[rest.index(after: close)...]
            var relations: [String] = []
            var sawRel = false
            while true {
                skip { $0 == " " || $0 == "\t" }
                guard rest.first == ";" else { break }
                rest.removeFirst()
                skip { $0 == " " || $0 == "\t" }
                let name = take { $0 != "=" && $0 != ";" && $0 != "," && $0 != " " && $0 != "\t" }.lowercased()
                skip { $0 == " " || $0 == "\t" }
                var value = ""
                if rest.first == "=" {
                    rest.removeFirst()
                    skip { $0 == " " || $0 == "\t" }
                    value = rest.first == "\"" ? quotedString() : String(take { $0 != ";" && $0 != "," && $0 != " " && $0 != "\t" })
                }
                if name == "rel" && !sawRel {
                    sawRel = true
                    relations = value.split(whereSeparator: { $0 == " " || $0 == "\t" }).map { $0.lowercased() }
                }
            }
            links.append(Link(target: target, relations: relations))
            skip { $0 != "," }
        }
    }

    private mutating func skip(while predicate: (Character) -> Bool) {
        rest = rest.drop(while: predicate)
    }

    private mutating func take(while predicate: (Character) -> Bool) -> Substring {
        let taken = rest.prefix(while: predicate)
        rest = rest[taken.endIndex...]
        return taken
    }

    /// A quoted-string with backslash escapes, the opening quote first in `rest`.
    private mutating func quotedString() -> String {
        rest.removeFirst()
        var value = ""
        while let character = rest.popFirst() {
            switch character {
            case "\"": return value
            case "\\": if let escaped = rest.popFirst() { value.append(escaped) }
            default: value.append(character)
            }
        }
        return value
    }
}

extension StringProtocol {
    func trimmingWhitespace() -> SubSequence {
        let start = firstIndex(where: { !$0.isWhitespace }) ?? endIndex
        let end = lastIndex(where: { !$0.isWhitespace }).map { index(after: $0) } ?? start
        return self[start..<Swift.max(start, end)]
    }
}
