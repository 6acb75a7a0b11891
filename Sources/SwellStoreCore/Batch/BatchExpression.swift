import Foundation

/// An arithmetic expression over a row's own attributes, for a `BatchUpdateRequest`'s
/// `propertiesToUpdate` (Store guarantees 42): `rating + 1`, `price * 1.2`, `(a + b) / 2`, `-score`,
/// or another attribute's name alone.
///
/// Operands are attribute names (integer, double, boolean — as 0/1 — or date attributes,
/// dates as Unix seconds) and number literals; operators `+ - * /` with the usual
/// precedence, unary minus and parentheses. As in SQL: a nil operand makes the result nil;
/// integers stay integers (division truncates toward zero) unless a double is involved;
/// dividing by zero gives nil. The format is checked when the request runs, against the
/// entity: an unknown attribute or a syntax error fails the request, naming the position.
public struct BatchExpression: Sendable, Hashable, CustomStringConvertible {
    /// The expression as written.
    public let format: String

    /// An expression in `format`, checked when the request runs.
    public init(_ format: String) {
        self.format = format
    }

    public var description: String { format }

    package indirect enum Node: Sendable, Hashable {
        case attribute(Int)
        case integer(Int64)
        case double(Double)
        case negate(Node)
        case binary(Character, Node, Node)
    }

    /// Why an expression cannot be used, with the character offset it was found at.
    package struct Problem: Error {
        package var offset: Int
        package var message: String
    }

    /// Parses the format against `entity`'s attributes.
    package func parse(for entity: EntityDescription) throws(Problem) -> Node {
        var parser = Parser(characters: Array(format), entity: entity)
        let node = try parser.sum()
        parser.skipSpaces()
        guard parser.position == parser.characters.count else {
            throw Problem(offset: parser.position, message: "unexpected '\(parser.characters[parser.position])'")
        }
        return node
    }

    private struct Parser {
        package let characters: [Character]
        package let entity: EntityDescription
        package var position = 0

        package mutating func skipSpaces() {
            while position < characters.count, characters[position].isWhitespace { position += 1 }
        }

        package mutating func sum() throws(Problem) -> Node {
            var node = try product()
            while true {
                skipSpaces()
                guard position < characters.count, characters[position] == "+" || characters[position] == "-" else { return node }
                let op = characters[position]
                position += 1
                node = .binary(op, node, try product())
            }
        }

        package mutating func product() throws(Problem) -> Node {
            var node = try unary()
            while true {
                skipSpaces()
                guard position < characters.count, characters[position] == "*" || characters[position] == "/" else { return node }
                let op = characters[position]
                position += 1
                node = .binary(op, node, try unary())
            }
        }

        package mutating func unary() throws(Problem) -> Node {
            skipSpaces()
            guard position < characters.count else { throw Problem(offset: position, message: "the expression ends where an operand was expected") }
            let character = characters[position]
            if character == "-" {
                position += 1
                return .negate(try unary())
            }
            if character == "(" {
                position += 1
                let node = try sum()
                skipSpaces()
                guard position < characters.count, characters[position] == ")" else {
                    throw Problem(offset: position, message: "expected ')'")
                }
                position += 1
                return node
            }
            let start = position
            if character.isNumber || character == "." {
                while position < characters.count, characters[position].isNumber || "._eE".contains(characters[position])
                        || ((characters[position] == "+" || characters[position] == "-") && "eE".contains(characters[position - 1])) {
                    position += 1
                }
                let text = String(characters[start..<position]).replacingOccurrences(of: "_", with: "")
                if let int = Int64(text) { return .integer(int) }
                if let double = Double(text), double.isFinite { return .double(double) }
                throw Problem(offset: start, message: "'\(text)' is not a number")
            }
            guard character.isLetter || character == "_" else { throw Problem(offset: start, message: "unexpected '\(character)'") }
            while position < characters.count, characters[position].isLetter || characters[position].isNumber || characters[position] == "_" {
                position += 1
            }
            let name = String(characters[start..<position])
            guard let index = entity.attributes.firstIndex(where: { $0.name == name && $0.destination == nil && $0.join == nil }) else {
                throw Problem(offset: start, message: "\(entity.name) has no attribute '\(name)'")
            }
            switch entity.attributes[index].type {
            case .integer, .double, .boolean, .date: return .attribute(index)
            case .string, .json: throw Problem(offset: start, message: "'\(name)' is a \(entity.attributes[index].type.rawValue) attribute: expressions compute numbers")
            }
        }
    }
}

extension BatchExpression.Node {
    /// The value of the expression for a row's values (nil operand or division by zero: null).
    package func evaluate(_ row: [StoreValue]) -> StoreValue {
        switch self {
        case .attribute(let index): return row[index]
        case .integer(let value): return .integer(value)
        case .double(let value): return .real(value)
        case .negate(let node):
            switch node.evaluate(row) {
            case .integer(let value): return value == .min ? .real(-Double(value)) : .integer(-value)
            case .real(let value): return .real(-value)
            default: return .null
            }
        case .binary(let op, let left, let right):
            let a = left.evaluate(row), b = right.evaluate(row)
            if case .integer(let x) = a, case .integer(let y) = b {
                let (value, overflow): (Int64, Bool)
                switch op {
                case "+": (value, overflow) = x.addingReportingOverflow(y)
                case "-": (value, overflow) = x.subtractingReportingOverflow(y)
                case "*": (value, overflow) = x.multipliedReportingOverflow(by: y)
                default:
                    if y == 0 { return .null }
                    (value, overflow) = x.dividedReportingOverflow(by: y)
                }
                // Past 64 bits the result becomes a double, as SQLite's arithmetic does.
                return overflow ? Self.real(op, Double(x), Double(y)) : .integer(value)
            }
            guard let x = a.number, let y = b.number else { return .null }
            return Self.real(op, x, y)
        }
    }

    private static func real(_ op: Character, _ x: Double, _ y: Double) -> StoreValue {
        switch op {
        case "+": return .real(x + y)
        case "-": return .real(x - y)
        case "*": return .real(x * y)
        default: return y == 0 ? .null : .real(x / y)
        }
    }
}

private extension StoreValue {
    var number: Double? {
        switch self {
        case .integer(let value): Double(value)
        case .real(let value): value
        case .null, .text: nil
        }
    }
}
