import SwellJSON

/// How a source proves who it is (Pipeline file reference version 3, `auth`). Every value is a
/// secret: the redactor hides it wherever it would be printed.
public enum SourceAuth: Sendable, Equatable {
    /// `Authorization: Bearer <token>`.
    case bearer(String)
    /// `Authorization: Basic <base64 of username:password>`.
    case basic(username: String, password: String)
    /// A key in a header (`inQuery` false) or in the query string.
    case apiKey(name: String, value: String, inQuery: Bool)
    /// An OAuth 2.0 client-credentials grant (RFC 6749 §4.4): a token fetched before the
    /// first request, kept in memory, fetched again before it expires and once after a 401.
    case oauth2(OAuth2ClientCredentials)

    /// The same credentials with `fill` applied to every value (`${item}` of a `for_each`) and
    /// `fillURL` to a token URL; nil when `fillURL` cannot fill it.
    func filling(with fill: (String) -> String, url fillURL: (String) -> String?) -> SourceAuth? {
        switch self {
        case .bearer(let token): return .bearer(fill(token))
        case .basic(let username, let password): return .basic(username: fill(username), password: fill(password))
        case .apiKey(let name, let value, let inQuery): return .apiKey(name: name, value: fill(value), inQuery: inQuery)
        case .oauth2(var grant):
            guard let tokenURL = fillURL(grant.tokenURL) else { return nil }
            grant.tokenURL = tokenURL
            grant.clientID = fill(grant.clientID)
            grant.clientSecret = fill(grant.clientSecret)
            grant.scope = grant.scope.map(fill)
            grant.audience = grant.audience.map(fill)
            grant.extra = grant.extra.map { OAuth2ClientCredentials.Field(name: $0.name, value: fill($0.value)) }
            return .oauth2(grant)
        }
    }

    /// The values to hide in every output.
    var secrets: [String] {
        switch self {
        case .bearer(let token): [token]
        case .basic(let username, let password): [username, password]
        case .apiKey(_, let value, _): [value]
        case .oauth2(let grant): [grant.clientID, grant.clientSecret]
        }
    }
}

/// The settings of an OAuth 2.0 client-credentials grant (`auth.oauth2_client_credentials`).
public struct OAuth2ClientCredentials: Sendable, Equatable {
    /// The token endpoint.
    public var tokenURL: String
    public var clientID: String
    public var clientSecret: String
    /// `scope` and `audience` form fields, when given.
    public var scope: String?
    public var audience: String?
    /// Further form fields (`extra`), in the file's order.
    public var extra: [Field] = []
    /// Whether the client authenticates with form fields (`client_auth: body`) rather than
    /// HTTP Basic (`basic`, the default; RFC 6749 §2.3.1).
    public var credentialsInBody = false

    /// A form field.
    public struct Field: Sendable, Equatable {
        public var name: String
        public var value: String
    }
}

/// Where a paging parameter goes (`paginate.in`): the URL's query, or the top level of
/// the JSON body; a GraphQL source's cursor goes in its query's variables.
public enum ParameterPlacement: String, Sendable {
    case query, body
    /// `paginate.variable` of a `graphql` source: a member of the body's `variables`.
    case graphQLVariables
}
