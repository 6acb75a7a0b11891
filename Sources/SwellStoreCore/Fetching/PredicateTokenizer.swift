/// A token of a predicate's format, with its 0-based character offset.
package struct PredicateToken: Sendable, Equatable {
    package enum Kind: Sendable, Equatable {
        /// A name; `escaped` when written `#name`, which is never a keyword.
        case identifier(String, escaped: Bool)
        case string(String)
        /// `.integer` or `.double`.
        case number(PredicateValue)
        /// `%@`, `%K`, `%d` (any integer placeholder) or `%f` (any floating-point one).
        case placeholder(Character)
        /// Punctuation and symbolic operators: `( ) { } , == = != <> < <= =< > >= => && || !`.
        case symbol(String)
        /// `[c]`, `[d]` or `[cd]`.
        case modifier(PredicateStringOptions)
        case end
    }

    /// Words that are never attribute names unless written with `#`.
    package static let keywords: Set<String> = [
        "AND", "OR", "NOT", "BEGINSWITH", "ENDSWITH", "CONTAINS", "LIKE", "IN", "BETWEEN", "MATCHES",
        "ANY", "ALL", "SOME", "NONE", "TRUE", "FALSE", "YES", "NO", "NIL", "NULL", "TRUEPREDICATE", "FALSEPREDICATE",
    ]

    package var kind: Kind
    package var offset: Int
    /// The token as written, for error messages.
    package var text: String

    package func isKeyword(_ keyword: String) -> Bool {
        if case .identifier(let name, escaped: false) = kind { return name.uppercased() == keyword }
        return false
    }

    /// How an error message names the token.
    package var phrase: String {
        switch kind {
        case .end: "the end of the predicate"
        case .string: "the string \(text)"
        default: "'\(text)'"
        }
    }
}

/// Splits a format into tokens, counting offsets in `Character`s.
package struct PredicateTokenizer {
    private let format: String
    private let characters: [Character]
    private var index = 0

    package init(format: String) {
        self.format = format
        self.characters = Array(format)
    }

    private func error(_ message: String, at offset: Int) -> FetchPredicateError {
        FetchPredicateError(message: message, offset: offset, format: format)
    }

    private func peek(_ ahead: Int = 0) -> Character? {
        index + ahead < characters.count ? characters[index + ahead] : nil
    }

    /// All tokens, ending with `.end`.
    package mutating func tokens() throws(FetchPredicateError) -> [PredicateToken] {
        var tokens: [PredicateToken] = []
        while true {
            while let character = peek(), character.isWhitespace { index += 1 }
            guard let character = peek() else {
                tokens.append(PredicateToken(kind: .end, offset: index, text: ""))
                return tokens
            }
            let start = index
            let kind: PredicateToken.Kind
            if Self.isIdentifierStart(character) {
                kind = .identifier(readIdentifier(), escaped: false)
            } else if character == "#" {
                index += 1
                guard let next = peek(), Self.isIdentifierStart(next) else {
                    throw error("expected a name after '#'", at: start)
                }
                kind = .identifier(readIdentifier(), escaped: true)
            } else if character == "'" || character == "\"" {
                kind = .string(try readString())
            } else if character.isASCIINumber || (character == "-" && peek(1)?.isASCIINumber == true) {
                kind = .number(try readNumber())
            } else if character == "%" {
                kind = .placeholder(try readPlaceholder())
            } else if character == "[" {
                kind = .modifier(try readModifier())
            } else if let symbol = readSymbol() {
                kind = .symbol(symbol)
            } else {
                throw error("unexpected character '\(character)'", at: start)
            }
            tokens.append(PredicateToken(kind: kind, offset: start, text: String(characters[start..<index])))
        }
    }

    private static func isIdentifierStart(_ character: Character) -> Bool {
        character == "_" || (character.isASCII && character.isLetter)
    }

    /// A name, or a key path of names (`spot.name`, `tags.@count`).
    private mutating func readIdentifier() -> String {
        let start = index
        while true {
            while let character = peek(), Self.isIdentifierStart(character) || character.isASCIINumber { index += 1 }
            guard peek() == ".", let next = peek(1), Self.isIdentifierStart(next) || next == "@" else { break }
            index += next == "@" ? 2 : 1
        }
        return String(characters[start..<index])
    }

    private mutating func readString() throws(FetchPredicateError) -> String {
        let start = index
        let quote = characters[index]
        index += 1
        var string = ""
        while let character = peek() {
            index += 1
            if character == quote { return string }
            guard character == "\\" else {
                string.append(character)
                continue
            }
            guard let escaped = peek() else { break }
            switch escaped {
            case "\\", "'", "\"": string.append(escaped)
            case "n": string.append("\n")
            case "t": string.append("\t")
            case "r": string.append("\r")
            default:
                throw error("unknown escape '\\\(escaped)' in a string: use \\\\, \\', \\\", \\n, \\t or \\r", at: index - 1)
            }
            index += 1
        }
        throw error("unterminated string: no closing \(quote)", at: start)
    }

    private mutating func readNumber() throws(FetchPredicateError) -> PredicateValue {
        let start = index
        if peek() == "-" { index += 1 }
        skipDigits()
        var isWhole = true
        if peek() == "." {
            isWhole = false
            index += 1
            guard peek()?.isASCIINumber == true else { throw error("expected digits after the decimal point", at: index) }
            skipDigits()
        }
        if peek() == "e" || peek() == "E" {
            let exponent = index
            isWhole = false
            index += 1
            if peek() == "+" || peek() == "-" { index += 1 }
            guard peek()?.isASCIINumber == true else { throw error("expected digits in the exponent", at: exponent) }
            skipDigits()
        }
        let text = String(characters[start..<index])
        if isWhole, let int = Int64(text) { return .integer(int) }
        guard let double = Double(text) else { throw error("'\(text)' is not a number", at: start) }
        return .double(double)
    }

    private mutating func skipDigits() {
        while peek()?.isASCIINumber == true { index += 1 }
    }

    /// A placeholder, as Core Data's formats write them: `%@` (a value), `%K` (an attribute
    /// name), `%d` `%i` `%u` with C's length modifiers (`%ld`, `%lld`, `%hd`, `%qd`, `%zd`, …:
    /// an integer) and `%f` `%e` `%g` (optionally `%lf`: a number). Returns `@`, `K`, `d`
    /// (an integer) or `f` (a number). Anything else is refused here, when the predicate is made.
    private mutating func readPlaceholder() throws(FetchPredicateError) -> Character {
        let start = index
        index += 1
        if let next = peek(), next == "@" || next == "K" {
            index += 1
            return next
        }
        var length = ""
        while let next = peek(), "hlqzjt".contains(next), length.count < 2 {
            length.append(next)
            index += 1
        }
        let conversion = peek()
        let lengths: Set<String> = ["", "h", "hh", "l", "ll", "q", "z", "j", "t"]
        if let conversion, "diu".contains(conversion), lengths.contains(length) {
            index += 1
            return "d"
        }
        if let conversion, "feg".contains(conversion), length.isEmpty || length == "l" {
            index += 1
            return "f"
        }
        let written = String(characters[start..<min(index + 1, characters.count)])
        throw error("unsupported placeholder '\(written)': use %@ for a value, %K for an attribute name, "
            + "%d (%i, %ld, …) for an integer or %f for a number", at: start)
    }

    private mutating func readModifier() throws(FetchPredicateError) -> PredicateStringOptions {
        let start = index
        index += 1
        var options: PredicateStringOptions = []
        while let character = peek(), character != "]" {
            let option: PredicateStringOptions
            switch character {
            case "c", "C": option = .caseInsensitive
            case "d", "D": option = .diacriticInsensitive
            default:
                throw error("unknown modifier '\(character)': use [c], [d] or [cd]", at: index)
            }
            guard !options.contains(option) else { throw error("modifier '\(character)' given twice", at: index) }
            options.insert(option)
            index += 1
        }
        guard peek() == "]" else { throw error("unclosed modifier: expected ']'", at: start) }
        guard !options.isEmpty else { throw error("empty modifier: use [c], [d] or [cd]", at: start) }
        index += 1
        return options
    }

    private mutating func readSymbol() -> String? {
        let twoCharacter = ["==", "!=", "<>", "<=", "=<", ">=", "=>", "&&", "||"]
        if let next = peek(1), let first = peek() {
            let pair = String([first, next])
            if twoCharacter.contains(pair) {
                index += 2
                return pair
            }
        }
        guard let first = peek(), ["(", ")", "{", "}", ",", "=", "<", ">", "!"].contains(first) else { return nil }
        index += 1
        return String(first)
    }
}

extension Character {
    /// `0`…`9` only (`isNumber` also accepts other scripts' digits and fractions).
    fileprivate var isASCIINumber: Bool {
        isASCII && isNumber
    }
}
