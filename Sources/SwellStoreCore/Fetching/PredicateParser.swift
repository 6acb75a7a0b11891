/// Parses NSPredicate's format syntax (the subset of Pipeline file reference) into a
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
package struct PredicateParser {
    /// How deeply parentheses and `NOT`s may nest: the parser recurses on
    /// them, and SQLite's parser, whose stack holds 100 entries, must read the
    /// SQL they compile to inside a fetch's statement (it overflows near 40).
    package static let maximumDepth = 24

    private let format: String
    private let characterCount: Int
    private let tokens: [PredicateToken]
    private let arguments: [PredicateValue]
    private var position = 0
    private var argumentsUsed = 0
    private var depth = 0

    /// Parses `format` with `arguments` for its placeholders.
    package static func parse(format: String, arguments: [PredicateValue]) throws(FetchPredicateError) -> PredicateExpression {
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
        /// An attribute or key path; `SELF` (unescaped) is the object itself.
        case attribute(String, offset: Int, isSelf: Bool)
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
        case (.attribute(let name, let offset, let isSelf), .value(let operand)):
            return comparison(name, offset, comparator, comparatorOffset, options, .value(operand), quantifier, isSelf: isSelf)
        case (.attribute(let name, let offset, let isSelf), .list(let elements, let listOffset)):
            return comparison(name, offset, comparator, comparatorOffset, options, .list(elements, offset: listOffset), quantifier,
                              isSelf: isSelf)
        case (.value(let operand), .attribute(let name, let offset, let isSelf)):
            guard let flipped = comparator.flipped else {
                throw error("the left side of \(comparator.spelling) must be an attribute, found \(operand.value.phrase)", at: operand.offset)
            }
            return comparison(name, offset, flipped, comparatorOffset, options, .value(operand), quantifier, isSelf: isSelf)
        case (.attribute, .attribute(let name, let offset, _)):
            throw error("expected a value on the right of \(comparator.spelling), found the attribute '\(name)' (comparing two attributes is not supported)", at: offset)
        case (.list(_, let offset), _):
            throw error("a list can only be on the right of IN or BETWEEN", at: offset)
        case (.value(let operand), .value), (.value(let operand), .list):
            throw error("expected an attribute name, found \(operand.value.phrase)", at: operand.offset)
        }
    }

    private func comparison(
        _ attribute: String, _ attributeOffset: Int, _ comparator: PredicateComparator, _ comparatorOffset: Int,
        _ options: PredicateStringOptions, _ rightSide: PredicateRightSide, _ quantifier: PredicateQuantifier? = nil,
        isSelf: Bool = false
    ) -> PredicateExpression {
        .comparison(
            PredicateComparison(
                attribute: attribute, attributeOffset: attributeOffset, comparator: comparator,
                comparatorOffset: comparatorOffset, options: options, rightSide: rightSide, quantifier: quantifier,
                isSelf: isSelf))
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
        case .attribute(let name, _, _): "'\(name)'"
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
            // `SELF` is the object; `SELF.name` is its `name`, as in NSPredicate (`#SELF` names an attribute).
            if name.uppercased() == "SELF" { return .attribute("SELF", offset: token.offset, isSelf: true) }
            if name.prefix(5).uppercased() == "SELF.", name.count > 5 {
                return .attribute(String(name.dropFirst(5)), offset: token.offset, isSelf: false)
            }
            return .attribute(name, offset: token.offset, isSelf: false)
        case .identifier(let name, escaped: true):
            advance()
            return .attribute(name, offset: token.offset, isSelf: false)
        case .placeholder("K"):
            let argument = try takeArgument(at: token.offset)
            guard case .string(let name) = argument else {
                throw error("%K needs an attribute name (a String) as its argument, found \(argument.phrase)", at: token.offset)
            }
            advance()
            return .attribute(name, offset: token.offset, isSelf: false)
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
                    "the argument for %@ is \(description); use a String, an integer, a Double, a Float, a Bool, a Date, nil, an object, an ObjectID or an array or Set of them",
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
