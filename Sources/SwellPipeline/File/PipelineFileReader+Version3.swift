import Foundation
import SwellJSON
import Yams

/// Version 3 of the pipeline file (Pipeline file reference, "Reaching real APIs"): `auth`,
/// `method` and `body`, offset paging and where the paging parameter goes, `on_status`,
/// and the incremental cursor's `initial` and `lag`. Each rule's error names its place.
extension PipelineFileReader {
    /// The source keys that need version 3.
    static let version3SourceKeys: Set<String> = ["auth", "method", "body", "on_status", "graphql"]

    /// Refuses a version-3 feature in an earlier file.
    func requireVersion3(_ node: Node, _ what: String) throws(PipelineFileError) {
        guard version >= 3 else { throw error(node, "\(what) needs version: 3 (this file says version: \(version))") }
    }

    /// `auth:` — exactly one of `bearer`, `basic`, `api_key`, `oauth2_client_credentials`.
    /// Every value is a secret, written in the file or not.
    mutating func readAuth(_ node: Node, source: String, keeping: Set<String>) throws(PipelineFileError) -> SourceAuth {
        let forms = ["bearer", "basic", "api_key", "oauth2_client_credentials"]
        let keys = try keyedMapping(node, "auth of source \(source)", allowed: Set(forms))
        guard keys.count == 1, let (form, value) = keys.first else {
            let given = keys.isEmpty ? "none" : keys.keys.sorted().joined(separator: " and ")
            throw error(node, "auth of source \(source) takes one form (bearer, basic, api_key or oauth2_client_credentials), not \(given)")
        }
        let what = "auth.\(form) of source \(source)"
        let auth: SourceAuth
        switch form {
        case "bearer":
            auth = .bearer(try nonEmpty(value, what, keeping: keeping))
        case "basic":
            let fields = try keyedMapping(value, what, allowed: ["username", "password"], required: ["username", "password"])
            auth = .basic(username: try interpolate(fields["username"]!, "\(what).username", keeping: keeping),
                          password: try interpolate(fields["password"]!, "\(what).password", keeping: keeping))
        case "api_key":
            let fields = try keyedMapping(value, what, allowed: ["name", "value", "in"], required: ["name", "value"])
            let name = try string(fields["name"]!, "\(what).name")
            guard !name.isEmpty, name.allSatisfy({ $0.isASCII && !$0.isWhitespace && $0 != ":" }) else {
                throw error(fields["name"], "\(what).name '\(name)' is not a header or parameter name")
            }
            var inQuery = false
            if let placement = fields["in"] {
                switch try string(placement, "\(what).in") {
                case "header": inQuery = false
                case "query": inQuery = true
                case let other: throw error(placement, "\(what).in must be header or query, not \"\(other)\"")
                }
            }
            auth = .apiKey(name: name, value: try nonEmpty(fields["value"]!, "\(what).value", keeping: keeping), inQuery: inQuery)
        default:
            auth = .oauth2(try readOAuth2(value, what: what, keeping: keeping))
        }
        secrets.formUnion(auth.secrets.filter { !$0.isEmpty })
        return auth
    }

    private mutating func readOAuth2(_ node: Node, what: String, keeping: Set<String>) throws(PipelineFileError) -> OAuth2ClientCredentials {
        let fields = try keyedMapping(node, what, allowed: ["token_url", "client_id", "client_secret", "scope", "audience", "extra", "client_auth"],
                                      required: ["token_url", "client_id", "client_secret"])
        let tokenURL = try nonEmpty(fields["token_url"]!, "\(what).token_url", keeping: keeping)
        guard tokenURL.hasPrefix("http://") || tokenURL.hasPrefix("https://") else {
            throw error(fields["token_url"], "\(what).token_url must be an http:// or https:// URL")
        }
        var grant = OAuth2ClientCredentials(tokenURL: tokenURL,
                                            clientID: try nonEmpty(fields["client_id"]!, "\(what).client_id", keeping: keeping),
                                            clientSecret: try nonEmpty(fields["client_secret"]!, "\(what).client_secret", keeping: keeping))
        grant.scope = try fields["scope"].map { node throws(PipelineFileError) in try interpolate(node, "\(what).scope", keeping: keeping) }
        grant.audience = try fields["audience"].map { node throws(PipelineFileError) in try interpolate(node, "\(what).audience", keeping: keeping) }
        if let extra = fields["extra"] {
            guard case .mapping(let mapping) = extra else { throw error(extra, "\(what).extra must be a mapping of form field: value, not \(written(extra))") }
            for (name, value) in mapping {
                let field = try string(name, "a form field of \(what).extra")
                guard !["grant_type", "client_id", "client_secret", "scope", "audience"].contains(field) else {
                    throw error(name, "\(what).extra may not set \(field): Swell sends it")
                }
                grant.extra.append(.init(name: field, value: try interpolate(value, "\(what).extra.\(field)", keeping: keeping)))
            }
        }
        if let clientAuth = fields["client_auth"] {
            switch try string(clientAuth, "\(what).client_auth") {
            case "basic": grant.credentialsInBody = false
            case "body": grant.credentialsInBody = true
            case let other: throw error(clientAuth, "\(what).client_auth must be basic or body, not \"\(other)\"")
            }
        }
        return grant
    }

    /// An interpolated string that must not be empty.
    private mutating func nonEmpty(_ node: Node, _ what: String, keeping: Set<String>) throws(PipelineFileError) -> String {
        let text = try interpolate(node, what, keeping: keeping)
        guard !text.isEmpty else { throw error(node, "\(what) is empty") }
        return text
    }

    /// `method: GET | POST | PUT`.
    func readMethod(_ node: Node, source: String) throws(PipelineFileError) -> String {
        let method = try string(node, "method of source \(source)")
        guard ["GET", "POST", "PUT"].contains(method) else {
            throw error(node, "method \"\(method)\" of source \(source) must be GET, POST or PUT")
        }
        return method
    }

    /// `body:` — any YAML value, as JSON; `${VAR}` in strings.
    mutating func readBody(_ node: Node, source: String, keeping: Set<String>) throws(PipelineFileError) -> JSONValue {
        switch node {
        case .mapping(let mapping):
            var members: [(key: String, value: JSONValue)] = []
            for (key, value) in mapping {
                members.append((try string(key, "a key of the body of source \(source)"), try readBody(value, source: source, keeping: keeping)))
            }
            return .object(JSONObject(members: members))
        case .sequence(let sequence):
            var elements: [JSONValue] = []
            for element in sequence { elements.append(try readBody(element, source: source, keeping: keeping)) }
            return .array(elements)
        case .scalar(let scalar):
            if scalar.style == .plain {
                if let value = Self.plainJSON(scalar.string) { return value }
            }
            return .string(try interpolate(node, "the body of source \(source)", keeping: keeping))
        case .alias:
            throw error(node, "the body of source \(source) may not use YAML aliases")
        }
    }

    /// A plain YAML scalar that is null, a boolean or a number, as JSON; nil for text.
    static func plainJSON(_ text: String) -> JSONValue? {
        switch text {
        case "null", "~", "": return .null
        case "true": return .bool(true)
        case "false": return .bool(false)
        default:
            // Not a JSON number (`1.2.3`, `-x`): the text is a string; the parse error says nothing more.
            guard text.first.map({ $0 == "-" || $0.isASCII && $0.isNumber }) == true,
                  let parsed = try? JSONValue.parse(Array(text.utf8)), case .number = parsed else { return nil }
            return parsed
        }
    }

    /// `graphql: { query, variables }`: the body of a POST, `{"query": …, "variables": {…}}`.
    mutating func readGraphQL(_ node: Node, source: String, keeping: Set<String>) throws(PipelineFileError) -> JSONValue {
        let what = "graphql of source \(source)"
        let keys = try keyedMapping(node, what, allowed: ["query", "variables"], required: ["query"])
        let query = try interpolate(keys["query"]!, "\(what).query", keeping: keeping)
        guard !query.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else { throw error(keys["query"], "\(what).query is empty") }
        var variables = JSONValue.object(JSONObject())
        if let node = keys["variables"] {
            variables = try readBody(node, source: source, keeping: keeping)
            guard case .object = variables else { throw error(node, "\(what).variables must be a mapping of name: value, not \(written(node))") }
        }
        return SourceSpec.graphQLBody(query: query, variables: variables)
    }

    /// `on_status: { 404: empty, … }`: statuses (400–599) read as "no records".
    func readOnStatus(_ node: Node, source: String) throws(PipelineFileError) -> Set<Int> {
        guard case .mapping(let mapping) = node else { throw error(node, "on_status of source \(source) must be a mapping of status: empty, not \(written(node))") }
        var statuses: Set<Int> = []
        for (key, value) in mapping {
            let text = try string(key, "a status of on_status")
            guard let status = Int(text), (400...599).contains(status) else {
                throw error(key, "on_status of source \(source): '\(text)' is not an HTTP error status (400–599)")
            }
            guard try string(value, "on_status.\(status)") == "empty" else {
                throw error(value, "on_status.\(status) of source \(source) must be empty (read the answer as no records), not \(written(value))")
            }
            statuses.insert(status)
        }
        return statuses
    }

    /// `paginate.offset: { param, limit_param, limit, start, total }`.
    func readOffset(_ node: Node, source: String) throws(PipelineFileError) -> Pagination {
        let what = "paginate.offset of source \(source)"
        let keys = try keyedMapping(node, what, allowed: ["param", "limit_param", "limit", "start", "total"], required: ["limit"])
        let parameter = try keys["param"].map { node throws(PipelineFileError) in try string(node, "\(what).param") } ?? "offset"
        let limitParameter = try keys["limit_param"].map { node throws(PipelineFileError) in try string(node, "\(what).limit_param") }
        guard !parameter.isEmpty, limitParameter?.isEmpty != true else { throw error(node, "\(what): a parameter name is empty") }
        return .offset(parameter: parameter, limitParameter: limitParameter,
                       limit: try integer(keys["limit"]!, "\(what).limit", in: 1...1_000_000_000),
                       start: try keys["start"].map { node throws(PipelineFileError) in try integer(node, "\(what).start", in: 0...Int.max) } ?? 0,
                       total: try keys["total"].map { node throws(PipelineFileError) in try dotPath(node, "\(what).total") })
    }
}
