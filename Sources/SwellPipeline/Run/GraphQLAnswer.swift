import SwellJSON

/// What a GraphQL API says besides its data (Pipeline file reference version 3, `graphql`): the
/// messages of the answer's `errors` array. An answer with errors and no data fails the
/// source quoting the first message (some APIs answer so with 200, others — Datasette's
/// plugin — with 500); errors beside data are logged as warnings.
enum GraphQLAnswer {
    /// Where the errors are in an answer.
    static let errorsPath = ["errors"]

    /// The messages of an `errors` array; nil when there is none or it is empty.
    static func messages(_ errors: JSONValue?) -> [String]? {
        guard case .array(let items)? = errors, !items.isEmpty else { return nil }
        return items.map { item in
            if case .object(let error) = item, case .string(let message)? = error["message"] { return message }
            return item.jsonText
        }
    }

    /// The messages in an error status's body, when it is a GraphQL answer with errors.
    static func messages(inBody body: [UInt8]?) -> [String]? {
        // An error body that is not JSON is no GraphQL answer: the HTTP error is reported as it is.
        guard let body, case .object(let answer)? = try? JSONValue.parse(body) else { return nil }
        return messages(answer["errors"])
    }
}
