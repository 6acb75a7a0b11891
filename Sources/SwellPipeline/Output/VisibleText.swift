/// The one rule for text that came from outside (a `for_each` item, a value of a page) and is
/// printed: a control character never reaches a log line, an error message or the terminal
/// as it is, so a value can neither forge a log line (CR, LF) nor send the terminal escapes
/// (ESC). Each is written visibly instead — `\r`, `\n`, `\t`, `\0`, else `\u{1B}` with its
/// code point in hex — as Swift writes them in a string literal (README, "Values from the API
/// are untrusted").
///
/// Control characters are those of Unicode's general category Cc (C0 U+0000–U+001F, DEL
/// U+007F, C1 U+0080–U+009F) and the line and paragraph separators U+2028 and U+2029.
package enum VisibleText {
    /// Whether `scalar` is a control character as this rule counts them.
    package static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x2028, 0x2029: true
        default: false
        }
    }

    /// The first control character of `text`, if it has one.
    package static func firstControl(in text: String) -> Unicode.Scalar? {
        text.unicodeScalars.first(where: isControl)
    }

    /// `text` with every control character written visibly.
    package static func escaping(_ text: String) -> String {
        guard firstControl(in: text) != nil else { return text }
        var result = ""
        result.unicodeScalars.reserveCapacity(text.unicodeScalars.count + 8)
        for scalar in text.unicodeScalars {
            if isControl(scalar) { result += written(scalar) } else { result.unicodeScalars.append(scalar) }
        }
        return result
    }

    /// A log line (or lines) as written to a stream: every control character escaped but
    /// the line break that ends the text.
    package static func escapingLine(_ text: String) -> String {
        // By scalars: a value ending in CR makes the last character CR LF, one `Character`.
        guard text.unicodeScalars.last == "\n" else { return escaping(text) }
        return escaping(String(text.unicodeScalars.dropLast())) + "\n"
    }

    /// How `scalar` is written: `\n`, `\r`, `\t`, `\0`, else `\u{…}` in upper-case hex.
    package static func written(_ scalar: Unicode.Scalar) -> String {
        switch scalar {
        case "\n": "\\n"
        case "\r": "\\r"
        case "\t": "\\t"
        case "\0": "\\0"
        default: "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
        }
    }
}
