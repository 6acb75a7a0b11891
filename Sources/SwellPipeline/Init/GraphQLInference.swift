import SwellJSON

/// What `swell init` reads from a GraphQL answer (README, "Writing a pipeline file"): the
/// connection's `nodes` with a `pageInfo { endCursor hasNextPage }` beside them — the
/// records, the cursor and whether more follow — and from the query, the variable the
/// cursor goes into.
public struct InitGraphQL: Sendable, Equatable {
    /// The query, as given.
    public var query: String
    /// Its variables, as given (a JSON object).
    public var variables: JSONValue
    /// The query's variable for the cursor (`$after: String`); nil when it declares none.
    public var cursorVariable: String?
    /// Where the answer says whether another page follows (`pageInfo.hasNextPage`).
    public var hasMore: [String]?

    /// A query with its variables; `cursorVariable` is read from the query.
    public init(query: String, variables: JSONValue = .object(JSONObject())) {
        self.query = query
        self.variables = variables
        cursorVariable = Self.cursorVariable(in: query)
    }

    /// A connection found in an answer.
    struct Connection {
        /// The path of its `nodes`.
        var nodes: [String]
        var count: Int
        /// The path of `pageInfo.endCursor` and `pageInfo.hasNextPage`, when the answer has them.
        var endCursor: [String]?
        var hasNextPage: [String]?
    }

    /// The connection with the most nodes under the answer's `data` (an object holding
    /// `nodes`, an array of objects), or nil when the answer has none.
    static func connection(in answer: JSONValue) -> Connection? {
        guard case .object(let top) = answer, let data = top.members.last(where: { $0.key == "data" })?.value else { return nil }
        var found: [Connection] = []
        collect(data, path: ["data"], into: &found)
        return found.max { $0.count < $1.count || ($0.count == $1.count && $0.nodes.count > $1.nodes.count) }
    }

    private static func collect(_ value: JSONValue, path: [String], into found: inout [Connection]) {
        guard case .object(let object) = value, path.count < 12 else { return }
        if case .array(let items)? = object.members.last(where: { $0.key == "nodes" })?.value,
           !items.isEmpty, items.allSatisfy({ if case .object = $0 { true } else { false } }) {
            var connection = Connection(nodes: path + ["nodes"], count: items.count)
            if case .object(let info)? = object.members.last(where: { $0.key == "pageInfo" })?.value {
                if info.members.contains(where: { $0.key == "endCursor" }) { connection.endCursor = path + ["pageInfo", "endCursor"] }
                if info.members.contains(where: { $0.key == "hasNextPage" }) { connection.hasNextPage = path + ["pageInfo", "hasNextPage"] }
            }
            found.append(connection)
        }
        for member in object.members where !member.key.isEmpty && !member.key.contains(".") {
            collect(member.value, path: path + [member.key], into: &found)
        }
    }

    /// The first message of an answer's `errors` when it has no data (the run would fail
    /// on it too), else nil.
    static func failure(of answer: JSONValue) -> String? {
        guard case .object(let top) = answer,
              case .array(let errors)? = top.members.last(where: { $0.key == "errors" })?.value, !errors.isEmpty else { return nil }
        if let data = top.members.last(where: { $0.key == "data" })?.value, data != .null { return nil }
        if case .object(let first) = errors[0], case .string(let message)? = first.members.last(where: { $0.key == "message" })?.value {
            return message
        }
        return errors[0].jsonText
    }

    /// The variable a cursor goes into: of the variables the query declares as `String`
    /// (`$after: String`), the one named like a cursor (`after`, `cursor`, `…Cursor`),
    /// else the only one.
    static func cursorVariable(in query: String) -> String? {
        var names: [String] = []
        let characters = Array(query)
        var index = 0
        while index < characters.count {
            guard characters[index] == "$" else { index += 1; continue }
            var end = index + 1
            while end < characters.count, characters[end].isLetter || characters[end].isNumber || characters[end] == "_" { end += 1 }
            let name = String(characters[(index + 1)..<end])
            var type = end
            while type < characters.count, characters[type].isWhitespace { type += 1 }
            if !name.isEmpty, type < characters.count, characters[type] == ":" {
                type += 1
                while type < characters.count, characters[type].isWhitespace { type += 1 }
                var typeEnd = type
                while typeEnd < characters.count, characters[typeEnd].isLetter { typeEnd += 1 }
                if String(characters[type..<typeEnd]) == "String", typeEnd >= characters.count || characters[typeEnd] != "!" {
                    names.append(name)
                }
            }
            index = end
        }
        if let named = names.first(where: { ["after", "cursor"].contains($0.lowercased()) || $0.lowercased().hasSuffix("cursor") }) {
            return named
        }
        return names.count == 1 ? names[0] : nil
    }
}
