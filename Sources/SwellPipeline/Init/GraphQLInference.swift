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
    /// on it too), else nil. Only a GraphQL answer is read so (`isGraphQL`, or a `data`
    /// member beside the errors): a REST page may say `errors` too.
    static func failure(of answer: JSONValue, isGraphQL: Bool) -> String? {
        guard case .object(let top) = answer,
              case .array(let errors)? = top.members.last(where: { $0.key == "errors" })?.value, !errors.isEmpty else { return nil }
        let data = top.members.last(where: { $0.key == "data" })?.value
        guard isGraphQL || data != nil else { return nil }
        if let data, data != .null { return nil }
        if case .object(let first) = errors[0], case .string(let message)? = first.members.last(where: { $0.key == "message" })?.value {
            return message
        }
        return errors[0].jsonText
    }

    /// The variable a cursor goes into: a variable the query declares as a nullable `String`
    /// (`$after: String`) and passes to an `after:` argument; else one declared so and
    /// named like a cursor (`after`, `cursor`, `…Cursor`). Nil otherwise: a String variable
    /// that is something else (`$owner`) must not receive the cursor.
    static func cursorVariable(in query: String) -> String? {
        let declared = nullableStringVariables(in: query)
        let characters = Array(query)
        var index = 0
        while let start = find("after", in: characters, from: index) {
            index = start + 5
            let before = start > 0 ? characters[start - 1] : " "
            guard !(before.isLetter || before.isNumber || before == "_" || before == "$") else { continue }
            var position = index
            while position < characters.count, characters[position].isWhitespace { position += 1 }
            guard position < characters.count, characters[position] == ":" else { continue }
            position += 1
            while position < characters.count, characters[position].isWhitespace { position += 1 }
            guard position < characters.count, characters[position] == "$" else { continue }
            let name = identifier(in: characters, from: position + 1)
            if declared.contains(name) { return name }
        }
        return declared.first { ["after", "cursor"].contains($0.lowercased()) || $0.lowercased().hasSuffix("cursor") }
    }

    /// The variables a query declares as `String` (not `String!`: the first page sends none).
    private static func nullableStringVariables(in query: String) -> [String] {
        var names: [String] = []
        let characters = Array(query)
        var index = 0
        while index < characters.count {
            guard characters[index] == "$" else { index += 1; continue }
            let name = identifier(in: characters, from: index + 1)
            var type = index + 1 + name.count
            index = type
            while type < characters.count, characters[type].isWhitespace { type += 1 }
            guard !name.isEmpty, type < characters.count, characters[type] == ":" else { continue }
            type += 1
            while type < characters.count, characters[type].isWhitespace { type += 1 }
            let typeName = identifier(in: characters, from: type)
            let end = type + typeName.count
            if typeName == "String", end >= characters.count || characters[end] != "!" { names.append(name) }
        }
        return names
    }

    private static func identifier(in characters: [Character], from start: Int) -> String {
        var end = start
        while end < characters.count, characters[end].isLetter || characters[end].isNumber || characters[end] == "_" { end += 1 }
        return start < characters.count ? String(characters[start..<end]) : ""
    }

    private static func find(_ word: String, in characters: [Character], from start: Int) -> Int? {
        let pattern = Array(word)
        guard start <= characters.count - pattern.count else { return nil }
        for index in start...(characters.count - pattern.count) where Array(characters[index..<(index + pattern.count)]) == pattern {
            return index
        }
        return nil
    }
}
