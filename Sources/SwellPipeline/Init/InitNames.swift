/// Names `swell init` gives what it infers: valid per the pipeline file's
/// rules (`PipelineFileReader.isIdentifier`, not starting with `_`, `swell_`
/// or `sqlite_`), kept as the JSON spells them whenever they already are.
enum InitNames {
    /// Whether `name` may be an attribute or relationship name as it is.
    static func isAttributeName(_ name: String) -> Bool {
        PipelineFileReader.isIdentifier(name) && !name.hasPrefix("_") && !name.lowercased().hasPrefix("swell_")
    }

    /// An attribute name for the JSON key `key`: the key itself when valid, else its
    /// letters, digits and underscores (`+1` → `plus_1`, `created-at` → `created_at`,
    /// `2fa` → `field_2fa`).
    static func attributeName(for key: String) -> String {
        if isAttributeName(key) { return key }
        var text = Substring(key)
        var prefix = ""
        if text.hasPrefix("+") { prefix = "plus_"; text = text.dropFirst() }
        if text.hasPrefix("-") { prefix = "minus_"; text = text.dropFirst() }
        var result = ""
        for scalar in (prefix + text).unicodeScalars {
            let keep = scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar))
            if keep {
                result.unicodeScalars.append(scalar)
            } else if !result.hasSuffix("_") {
                result += "_"
            }
        }
        while result.hasPrefix("_") { result.removeFirst() }
        while result.hasSuffix("_") { result.removeLast() }
        if result.isEmpty { return "field" }
        if let first = result.unicodeScalars.first, ("0"..."9").contains(first) || result.lowercased().hasPrefix("swell_") {
            result = "field_" + result
        }
        return result
    }

    /// `base`, or `base_2`, `base_3`… : the first not in `taken` (compared ignoring case).
    static func unique(_ base: String, taken: Set<String>, separator: String = "_") -> String {
        var candidate = base
        var number = 2
        while taken.contains(candidate.lowercased()) {
            candidate = "\(base)\(separator)\(number)"
            number += 1
        }
        return candidate
    }

    /// An entity name from words: `line_items` → `LineItem` (the last word made singular),
    /// `github-issues-page` → `GithubIssuesPage`; `Record` when nothing is left.
    static func entityName(from text: String, singular: Bool) -> String {
        var words = text.split(whereSeparator: { !($0.isASCII && ($0.isLetter || $0.isNumber)) }).map(String.init)
        if singular, let last = words.popLast() { words.append(Self.singular(last)) }
        var name = words.map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
        if name.isEmpty { return "Record" }
        if let first = name.first, first.isNumber { name = "E" + name }
        return name
    }

    /// A plural English noun made singular the simple way (`issues` → `issue`, `entries` →
    /// `entry`, `boxes` → `box`); words that do not look plural are kept.
    static func singular(_ word: String) -> String {
        let lower = word.lowercased()
        guard word.count > 3 else { return word }
        if lower.hasSuffix("ies") { return word.dropLast(3) + "y" }
        if lower.hasSuffix("sses") || lower.hasSuffix("xes") || lower.hasSuffix("ches") || lower.hasSuffix("shes") { return String(word.dropLast(2)) }
        if lower.hasSuffix("s"), !lower.hasSuffix("ss"), !lower.hasSuffix("us"), !lower.hasSuffix("is") { return String(word.dropLast()) }
        return word
    }

    /// A pipeline name (`[a-z0-9_-]+`) from the last path segment of a URL or file path,
    /// without its query and extension: `https://api.example.com/v1/issues?page=1` → `issues`,
    /// `fixtures/sync/users_a.json` → `users_a`; `pipeline` when nothing is left.
    static func pipelineName(fromURL url: String) -> String {
        var text = Substring(url)
        if let schemeEnd = text.range(of: "://") {
            text = text[schemeEnd.upperBound...]
            text = text.firstIndex(of: "/").map { text[$0...] } ?? ""
        }
        if let end = text.firstIndex(where: { $0 == "?" || $0 == "#" }) { text = text[..<end] }
        let segment = text.split(separator: "/").last.map(String.init) ?? ""
        var stem = segment
        // `prices.csv.gz` → `prices`: a `.gz` and the format's extension go.
        if stem.lowercased().hasSuffix(".gz"), stem.count > 3 { stem.removeLast(3) }
        if let dot = stem.lastIndex(of: "."), dot != stem.startIndex { stem = String(stem[..<dot]) }
        return pipelineName(from: stem)
    }

    /// `text` made a pipeline name: lower case; other characters than `[a-z0-9_-]` become `-`.
    static func pipelineName(from text: String) -> String {
        var result = ""
        for character in text.lowercased() {
            let keep = character.isASCII && (character.isLetter || character.isNumber || character == "_" || character == "-")
            if keep {
                result.append(character)
            } else if !result.hasSuffix("-") {
                result += "-"
            }
        }
        while result.hasPrefix("-") { result.removeFirst() }
        while result.hasSuffix("-") { result.removeLast() }
        return result.isEmpty ? "pipeline" : result
    }
}
