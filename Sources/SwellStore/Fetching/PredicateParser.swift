/// A value written in a predicate's format or passed for a `%@`, before it is
/// typed against an attribute.
enum PredicateValue: Sendable, Hashable {
    case string(String)
    case integer(Int64)
    case double(Double)
    case bool(Bool)
    /// A `Date` argument, as Unix seconds.
    case date(Double)
    case null
    /// An array argument, for `IN %@` and `BETWEEN %@`.
    case list([PredicateValue])
    /// An argument of a type predicates cannot use, described for the error.
    case unsupported(String)

    /// How an error message names the value.
    var phrase: String {
        switch self {
        case .string(let string): "the string '\(string)'"
        case .integer(let int): "the number \(int)"
        case .double(let double): "the number \(double)"
        case .bool(let bool): bool ? "TRUE" : "FALSE"
        case .date: "a Date"
        case .null: "NIL"
        case .list: "a list"
        case .unsupported(let description): description
        }
    }
}

/// A value and the character offset in the format where it was written.
struct PredicateOperand: Sendable, Hashable {
    var value: PredicateValue
    var offset: Int
}

/// The right side of a comparison: one value, or a list for `IN` and `BETWEEN`.
enum PredicateRightSide: Sendable, Hashable {
    case value(PredicateOperand)
    case list([PredicateOperand], offset: Int)
}

/// A predicate's operators.
enum PredicateComparator: Sendable, Hashable {
    case equal, notEqual, less, lessOrEqual, greater, greaterOrEqual
    case beginsWith, endsWith, contains, like
    case `in`, between

    /// The operator with its sides swapped (`5 < x` is `x > 5`), for the six comparisons.
    var flipped: PredicateComparator? {
        switch self {
        case .equal, .notEqual: self
        case .less: .greater
        case .lessOrEqual: .greaterOrEqual
        case .greater: .less
        case .greaterOrEqual: .lessOrEqual
        case .beginsWith, .endsWith, .contains, .like, .in, .between: nil
        }
    }

    /// How error messages name the operator.
    var spelling: String {
        switch self {
        case .equal: "=="
        case .notEqual: "!="
        case .less: "<"
        case .lessOrEqual: "<="
        case .greater: ">"
        case .greaterOrEqual: ">="
        case .beginsWith: "BEGINSWITH"
        case .endsWith: "ENDSWITH"
        case .contains: "CONTAINS"
        case .like: "LIKE"
        case .in: "IN"
        case .between: "BETWEEN"
        }
    }
}

/// One comparison of an attribute with a value or a list, normalised so the
/// attribute is on the left.
/// `ANY`/`SOME`, `ALL` or `NONE` before a key path through a to-many.
enum PredicateQuantifier: String, Sendable, Hashable {
    case any, all, none
}

struct PredicateComparison: Sendable, Hashable {
    /// An attribute, or a key path through relationships (`spot.name`, `tags.@count`).
    var attribute: String
    var attributeOffset: Int
    var comparator: PredicateComparator
    var comparatorOffset: Int
    var options: PredicateStringOptions
    var rightSide: PredicateRightSide
    /// The quantifier written before the key path, if any.
    var quantifier: PredicateQuantifier? = nil
}

/// A parsed predicate. `AND` and `OR` chains are flat lists, so depth grows
/// only with parentheses and `NOT`.
indirect enum PredicateExpression: Sendable, Hashable {
    /// `TRUEPREDICATE` or `FALSEPREDICATE`.
    case constant(Bool)
    case comparison(PredicateComparison)
    case not(PredicateExpression)
    case and([PredicateExpression])
    case or([PredicateExpression])
}

/// Parses NSPredicate's format syntax (the subset of `pipeline-file.md`) into a
/// `PredicateExpression`, substituting `%@` and `%K` arguments in order.
///
/// ```
/// or         := and (("OR" | "||") and)*
/// and        := not (("AND" | "&&") not)*
/// not        := ("NOT" | "!") not | primary
/// primary    := "(" or ")" | "TRUEPREDICATE" | "FALSEPREDICATE" | comparison
/// comparison := side operator modifier? side
/// side       := identifier | "#"identifier | "%K" | literal | "%@" | "{" (value ("," value)*)? "}"
/// ```
struct PredicateParser {
    /// How deeply parentheses and `NOT`s may nest: the parser recurses on
    /// them, and SQLite's parser, whose stack holds 100 entries, must read the
    /// SQL they compile to inside a fetch's statement (it overflows near 40).
    static let maximumDepth = 24

    private let format: String
    private let characterCount: Int
    private let tokens: [PredicateToken]
    private let arguments: [PredicateValue]
    private var position = 0
    private var argumentsUsed = 0
    private var depth = 0

    /// Parses `format` with `arguments` for its placeholders.
    static func parse(format: String, arguments: [PredicateValue]) throws(FetchPredicateError) -> PredicateExpression {
        var tokenizer = PredicateTokenizer(format: format)
        var parser = PredicateParser(
            format: format, characterCount: format.count, tokens: try tokenizer.tokens(), arguments: arguments)
        return try parser.parsePredicate()
    }

    private init(format: String, characterCount: Int, tokens: [PredicateToken], arguments: [PredicateValue]) {
        self.format = format
        self.characterCount = characterCount
        self.tokens = tokens
        self.arguments = arguments
    }

    private var current: PredicateToken { tokens[position] }

    private mutating func advance() {
        if position < tokens.count - 1 { position += 1 }
    }

    private func error(_ message: String, at offset: Int) -> FetchPredicateError {
        FetchPredicateError(message: message, offset: offset, format: format)
    }

    private mutating func parsePredicate() throws(FetchPredicateError) -> PredicateExpression {
        if current.kind == .end { throw error("the predicate is empty", at: 0) }
        let expression = try parseOr()
        guard current.kind == .end else {
            if current.kind == .symbol(")") { throw error("unbalanced ')': no '(' to close", at: current.offset) }
            throw error("expected AND, OR or the end of the predicate, found \(current.phrase)", at: current.offset)
        }
        guard argumentsUsed == arguments.count else {
            throw error(
                "\(arguments.count) arguments were given but the predicate uses \(argumentsUsed)", at: characterCount)
        }
        return expression
    }

    private mutating func parseOr() throws(FetchPredicateError) -> PredicateExpression {
        var terms = [try parseAnd()]
        while current.isKeyword("OR") || current.kind == .symbol("||") {
            advance()
            terms.append(try parseAnd())
        }
        return terms.count == 1 ? terms[0] : .or(terms)
    }

    private mutating func parseAnd() throws(FetchPredicateError) -> PredicateExpression {
        var terms = [try parseNot()]
        while current.isKeyword("AND") || current.kind == .symbol("&&") {
            advance()
            terms.append(try parseNot())
        }
        return terms.count == 1 ? terms[0] : .and(terms)
    }

    private mutating func parseNot() throws(FetchPredicateError) -> PredicateExpression {
        guard current.isKeyword("NOT") || current.kind == .symbol("!") else { return try parsePrimary() }
        try enterNesting()
        advance()
        let operand = try parseNot()
        depth -= 1
        return .not(operand)
    }

    private mutating func enterNesting() throws(FetchPredicateError) {
        depth += 1
        guard depth <= Self.maximumDepth else {
            throw error("the predicate nests parentheses or NOT more than \(Self.maximumDepth) deep", at: current.offset)
        }
    }

    private mutating func parsePrimary() throws(FetchPredicateError) -> PredicateExpression {
        if current.kind == .symbol("(") {
            let open = current.offset
            try enterNesting()
            advance()
            if current.kind == .end { throw error("expected a comparison after '(', found the end of the predicate", at: current.offset) }
            let inner = try parseOr()
            switch current.kind {
            case .symbol(")"):
                advance()
            case .end:
                throw error("unbalanced '(': no ')' closes it", at: open)
            default:
                throw error("expected ')', AND or OR, found \(current.phrase)", at: current.offset)
            }
            depth -= 1
            return inner
        }
        if current.isKeyword("TRUEPREDICATE") {
            advance()
            return .constant(true)
        }
        if current.isKeyword("FALSEPREDICATE") {
            advance()
            return .constant(false)
        }
        return try parseComparison()
    }

    /// One side of a comparison, before the sides are normalised.
    private enum Side {
        case attribute(String, offset: Int)
        case value(PredicateOperand)
        case list([PredicateOperand], offset: Int)
    }

    private mutating func parseComparison() throws(FetchPredicateError) -> PredicateExpression {
        var quantifier: PredicateQuantifier?
        if case .identifier(let word, escaped: false) = current.kind, position + 1 < tokens.count,
           case .identifier(let next, _) = tokens[position + 1].kind, !PredicateToken.keywords.contains(next.uppercased()) {
            switch word.uppercased() {
            case "ANY", "SOME": quantifier = .any
            case "ALL": quantifier = .all
            case "NONE": quantifier = PredicateQuantifier.none
            default: break
            }
            if quantifier != nil { advance() }
        }
        let left = try parseSide(expecting: "an attribute name")
        let comparatorOffset = current.offset
        let comparator = try parseComparator(after: left)
        var options: PredicateStringOptions = []
        if case .modifier(let modifier) = current.kind {
            options = modifier
            advance()
        }
        let right = try parseSide(expecting: "a value after \(comparator.spelling)")

        switch (left, right) {
        case (.attribute(let name, let offset), .value(let operand)):
            return comparison(name, offset, comparator, comparatorOffset, options, .value(operand), quantifier)
        case (.attribute(let name, let offset), .list(let elements, let listOffset)):
            return comparison(name, offset, comparator, comparatorOffset, options, .list(elements, offset: listOffset), quantifier)
        case (.value(let operand), .attribute(let name, let offset)):
            guard let flipped = comparator.flipped else {
                throw error("the left side of \(comparator.spelling) must be an attribute, found \(operand.value.phrase)", at: operand.offset)
            }
            return comparison(name, offset, flipped, comparatorOffset, options, .value(operand), quantifier)
        case (.attribute, .attribute(let name, let offset)):
            throw error("expected a value on the right of \(comparator.spelling), found the attribute '\(name)' (comparing two attributes is not supported)", at: offset)
        case (.list(_, let offset), _):
            throw error("a list can only be on the right of IN or BETWEEN", at: offset)
        case (.value(let operand), .value), (.value(let operand), .list):
            throw error("expected an attribute name, found \(operand.value.phrase)", at: operand.offset)
        }
    }

    private func comparison(
        _ attribute: String, _ attributeOffset: Int, _ comparator: PredicateComparator, _ comparatorOffset: Int,
        _ options: PredicateStringOptions, _ rightSide: PredicateRightSide, _ quantifier: PredicateQuantifier? = nil
    ) -> PredicateExpression {
        .comparison(
            PredicateComparison(
                attribute: attribute, attributeOffset: attributeOffset, comparator: comparator,
                comparatorOffset: comparatorOffset, options: options, rightSide: rightSide, quantifier: quantifier))
    }

    private mutating func parseComparator(after left: Side) throws(FetchPredicateError) -> PredicateComparator {
        let token = current
        let comparator: PredicateComparator
        switch token.kind {
        case .symbol("=="), .symbol("="): comparator = .equal
        case .symbol("!="), .symbol("<>"): comparator = .notEqual
        case .symbol("<"): comparator = .less
        case .symbol("<="), .symbol("=<"): comparator = .lessOrEqual
        case .symbol(">"): comparator = .greater
        case .symbol(">="), .symbol("=>"): comparator = .greaterOrEqual
        case .identifier(let name, escaped: false):
            switch name.uppercased() {
            case "BEGINSWITH": comparator = .beginsWith
            case "ENDSWITH": comparator = .endsWith
            case "CONTAINS": comparator = .contains
            case "LIKE": comparator = .like
            case "IN": comparator = .in
            case "BETWEEN": comparator = .between
            case "MATCHES", "ANY", "ALL", "SOME", "NONE":
                throw error("the operator '\(name)' is not supported", at: token.offset)
            default:
                throw error("unknown operator '\(name)'", at: token.offset)
            }
        case .identifier(let name, escaped: true):
            throw error("unknown operator '#\(name)'", at: token.offset)
        case .end:
            throw error("expected an operator after \(describe(left)), found the end of the predicate", at: token.offset)
        default:
            throw error("expected an operator after \(describe(left)), found \(token.phrase)", at: token.offset)
        }
        advance()
        return comparator
    }

    private func describe(_ side: Side) -> String {
        switch side {
        case .attribute(let name, _): "'\(name)'"
        case .value(let operand): operand.value.phrase
        case .list: "a list"
        }
    }

    private mutating func parseSide(expecting expected: String) throws(FetchPredicateError) -> Side {
        let token = current
        switch token.kind {
        case .identifier(let name, escaped: false):
            if let literal = Self.keywordLiteral(name) {
                advance()
                return .value(PredicateOperand(value: literal, offset: token.offset))
            }
            if PredicateToken.keywords.contains(name.uppercased()) {
                throw error("expected \(expected), found \(token.phrase)", at: token.offset)
            }
            advance()
            return .attribute(name, offset: token.offset)
        case .identifier(let name, escaped: true):
            advance()
            return .attribute(name, offset: token.offset)
        case .placeholder("K"):
            let argument = try takeArgument(at: token.offset)
            guard case .string(let name) = argument else {
                throw error("%K needs an attribute name (a String) as its argument, found \(argument.phrase)", at: token.offset)
            }
            advance()
            return .attribute(name, offset: token.offset)
        case .symbol("{"):
            return try parseList()
        default:
            let operand = try parseValue(expecting: expected)
            if case .list(let elements) = operand.value {
                return .list(elements.map { PredicateOperand(value: $0, offset: operand.offset) }, offset: operand.offset)
            }
            return .value(operand)
        }
    }

    private mutating func parseList() throws(FetchPredicateError) -> Side {
        let open = current.offset
        advance()
        var elements: [PredicateOperand] = []
        if current.kind == .symbol("}") {
            advance()
            return .list(elements, offset: open)
        }
        while true {
            let element = try parseValue(expecting: "a value in the list")
            if case .list = element.value {
                throw error("a list cannot contain a list", at: element.offset)
            }
            elements.append(element)
            switch current.kind {
            case .symbol(","):
                advance()
            case .symbol("}"):
                advance()
                return .list(elements, offset: open)
            case .end:
                throw error("unbalanced '{': no '}' closes the list", at: open)
            default:
                throw error("expected ',' or '}' in the list, found \(current.phrase)", at: current.offset)
            }
        }
    }

    /// A literal or a `%@` argument.
    private mutating func parseValue(expecting expected: String) throws(FetchPredicateError) -> PredicateOperand {
        let token = current
        let value: PredicateValue
        switch token.kind {
        case .string(let string): value = .string(string)
        case .number(let number): value = number
        case .identifier(let name, escaped: false):
            guard let literal = Self.keywordLiteral(name) else {
                throw error("expected \(expected), found \(token.phrase)", at: token.offset)
            }
            value = literal
        case .placeholder("@"):
            value = try takeArgument(at: token.offset)
            if case .unsupported(let description) = value {
                throw error(
                    "the argument for %@ is \(description); use a String, an integer, a Double, a Float, a Bool, a Date, nil or an array of them",
                    at: token.offset)
            }
        case .placeholder("d"):
            let argument = try takeArgument(at: token.offset)
            guard case .integer = argument else {
                throw error("\(token.text) needs an integer argument, found \(argument.phrase) (use %f for a number, %@ for any value)", at: token.offset)
            }
            value = argument
        case .placeholder("f"):
            switch try takeArgument(at: token.offset) {
            case .double(let number): value = .double(number)
            case .integer(let number): value = .double(Double(number))
            case let argument:
                throw error("\(token.text) needs a number argument, found \(argument.phrase) (use %@ for any value)", at: token.offset)
            }
        case .end:
            throw error("expected \(expected), found the end of the predicate", at: token.offset)
        default:
            throw error("expected \(expected), found \(token.phrase)", at: token.offset)
        }
        advance()
        return PredicateOperand(value: value, offset: token.offset)
    }

    private mutating func takeArgument(at offset: Int) throws(FetchPredicateError) -> PredicateValue {
        guard argumentsUsed < arguments.count else {
            throw error("missing argument: the predicate has more placeholders than the \(arguments.count) arguments given", at: offset)
        }
        argumentsUsed += 1
        return arguments[argumentsUsed - 1]
    }

    private static func keywordLiteral(_ name: String) -> PredicateValue? {
        switch name.uppercased() {
        case "TRUE", "YES": .bool(true)
        case "FALSE", "NO": .bool(false)
        case "NIL", "NULL": .null
        default: nil
        }
    }
}

/// A token of a predicate's format, with its 0-based character offset.
struct PredicateToken: Sendable, Equatable {
    enum Kind: Sendable, Equatable {
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
    static let keywords: Set<String> = [
        "AND", "OR", "NOT", "BEGINSWITH", "ENDSWITH", "CONTAINS", "LIKE", "IN", "BETWEEN", "MATCHES",
        "ANY", "ALL", "SOME", "NONE", "TRUE", "FALSE", "YES", "NO", "NIL", "NULL", "TRUEPREDICATE", "FALSEPREDICATE",
    ]

    var kind: Kind
    var offset: Int
    /// The token as written, for error messages.
    var text: String

    func isKeyword(_ keyword: String) -> Bool {
        if case .identifier(let name, escaped: false) = kind { return name.uppercased() == keyword }
        return false
    }

    /// How an error message names the token.
    var phrase: String {
        switch kind {
        case .end: "the end of the predicate"
        case .string: "the string \(text)"
        default: "'\(text)'"
        }
    }
}

/// Splits a format into tokens, counting offsets in `Character`s.
struct PredicateTokenizer {
    private let format: String
    private let characters: [Character]
    private var index = 0

    init(format: String) {
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
    mutating func tokens() throws(FetchPredicateError) -> [PredicateToken] {
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
