import SwellHTTP

/// The rules for a `for_each` item (README, "Values from the API are untrusted"): an item may
/// come from the file, from an items file, or from a value the store holds — which an API sent —
/// so it is untrusted. An item that could change where a request goes or what it carries is a
/// bad record of its item (`on_error` applies; the other items run): one with a control
/// character (a header or a log line would break at it), one with a `.` or `..` segment
/// (a server, or curl, would read it as this folder or its parent — also once percent-decoded,
/// as many servers decode `%2E%2E`), an empty one. The other values are encoded for the place
/// they fill (`SourceSpec.expanded(item:index:pipeline:)`).
enum ForEachItem {
    /// Why `item` cannot be filled in anywhere, or nil when it can.
    static func problem(with item: String) -> String? {
        if item.isEmpty { return "it is empty" }
        if let control = VisibleText.firstControl(in: item) {
            return "it holds a control character (\(VisibleText.written(control))), which no URL, header or log line may carry"
        }
        if hasDotSegment(item) {
            return "it has a '.' or '..' path segment (also percent-encoded), which would lead the request out of its path"
        }
        return nil
    }

    /// Whether `item`, as it is or percent-decoded once, twice or three times, has a segment
    /// (between `/` or `\`) that is `.` or `..`.
    static func hasDotSegment(_ item: String) -> Bool {
        var form = item
        for _ in 0..<4 {
            let segments = form.split(omittingEmptySubsequences: false) { $0 == "/" || $0 == "\\" }
            if segments.contains(where: { $0 == "." || $0 == ".." }) { return true }
            let decoded = HTTPLinks.percentDecodedPath(form)
            if decoded == form { return false }
            form = decoded
        }
        return false
    }

    /// `text` as one file name in a path: `%`, `/`, `\` and control characters percent-encoded,
    /// and a name that is `.` or `..` as `%2E` and `%2E%2E`, so that a value never leaves the
    /// folder its path names (`rejects/${item}.ndjson`, the default rejects file).
    static func fileNameComponent(_ text: String) -> String {
        if text == "." || text == ".." { return String(repeating: "%2E", count: text.count) }
        var result = ""
        for scalar in text.unicodeScalars {
            if scalar == "%" || scalar == "/" || scalar == "\\" || VisibleText.isControl(scalar) {
                for byte in String(scalar).utf8 { result += "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true) }
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}

/// A `for_each` item that cannot be used (`ForEachItem.problem(with:)`): the expansion that
/// carries it never runs. With `on_error: fail` it is the run's error (65); with `skip` it
/// goes to its expansion's rejects file, with a warning, and the other items run.
public struct ForEachItemRejection: Sendable, Equatable {
    /// The item, as it came.
    public var item: String
    /// Its position among its `for_each`'s items, from 0.
    public var index: Int
    /// Why it cannot be used.
    public var reason: String

    /// The item as messages show it: control characters written visibly.
    public var shown: String { VisibleText.escaping(item) }
}
