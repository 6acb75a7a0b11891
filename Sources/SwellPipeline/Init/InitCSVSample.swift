import Foundation
import SwellInput
import SwellJSON

/// A CSV sample for `swell init` (README, "Writing a pipeline file"): its rows read by
/// the same transcoder a `format: csv` source uses, the delimiter guessed from the
/// header line, and each cell's text given the JSON kind it reads as, so the inferred
/// types are what the values are (`42` an integer, `true` a boolean) while the run
/// converts the same text by the Values table.
enum InitCSVSample {
    /// Whether the sample is CSV: its path (before any query, without `.gz`) ends in
    /// `.csv` or `.tsv`, or the server says `text/csv` or `text/tab-separated-values`.
    static func isCSV(url: String, contentType: String?) -> Bool {
        var path = url.prefix { $0 != "?" && $0 != "#" }.lowercased()
        if path.hasSuffix(".gz") { path.removeLast(3) }
        if path.hasSuffix(".csv") || path.hasSuffix(".tsv") { return true }
        let type = contentType?.lowercased().split(separator: ";").first?.trimmingCharacters(in: .whitespaces)
        return type == "text/csv" || type == "text/tab-separated-values"
    }

    /// The delimiter of the first line: of `,` `;` tab `|`, the one found most often
    /// outside quotes (a comma when none is).
    static func delimiter(of bytes: [UInt8]) -> UInt8 {
        let candidates: [UInt8] = [UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: "\t"), UInt8(ascii: "|")]
        var counts = [Int](repeating: 0, count: candidates.count)
        var quoted = false
        for byte in bytes {
            if byte == UInt8(ascii: "\"") { quoted.toggle(); continue }
            if !quoted && (byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r")) { break }
            if !quoted, let index = candidates.firstIndex(of: byte) { counts[index] += 1 }
        }
        guard let best = counts.indices.max(by: { counts[$0] < counts[$1] || (counts[$0] == counts[$1] && $0 > $1) }), counts[best] > 0 else {
            return candidates[0]
        }
        return candidates[best]
    }

    /// The rows of `bytes` as an array of objects, each cell typed by `typed(_:)`.
    ///
    /// - Throws: `PipelineError` `.data` naming the line of a row that is not CSV.
    static func records(_ bytes: [UInt8], delimiter: UInt8, url: String) throws(PipelineError) -> JSONValue {
        var transcoder = CSVRecordTranscoder(delimiter: delimiter, header: true)
        var ndjson: [UInt8] = []
        do {
            try bytes.withUnsafeBytes { raw in
                try transcoder.feed(raw) { ndjson.append(contentsOf: $0) }
                try transcoder.finish { ndjson.append(contentsOf: $0) }
            }
        } catch {
            throw PipelineError(.data, "the CSV sample \(url) cannot be read: \(error)", underlying: error)
        }
        var rows: [JSONValue] = []
        for line in ndjson.split(separator: UInt8(ascii: "\n")) {
            guard case .object(let object)? = try? JSONValue.parse(line) else { continue }  // the transcoder writes objects
            rows.append(.object(JSONObject(members: object.members.map { ($0.key, typed($0.value)) })))
        }
        return .array(rows)
    }

    /// A cell as the JSON value it reads as: `true`/`false` a boolean, a whole number
    /// without a leading zero that fits 64 bits an integer, a decimal with digits on both
    /// sides of the point a number; anything else (`007`, `1e5`, a date) stays text.
    static func typed(_ value: JSONValue) -> JSONValue {
        guard case .string(let text) = value else { return value }
        if text == "true" { return .bool(true) }
        if text == "false" { return .bool(false) }
        let digits = text.hasPrefix("-") ? text.dropFirst() : Substring(text)
        let parts = digits.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy { $0.isASCII && $0.isNumber } }),
              parts[0] == "0" || !parts[0].hasPrefix("0") else { return value }
        if parts.count == 1 {
            guard let integer = Int64(text) else { return value }
            return .number(JSONNumber(integer))
        }
        guard let number = try? JSONValue.parse(text.utf8), case .number = number else { return value }  // digits.digits is JSON
        return number
    }
}
