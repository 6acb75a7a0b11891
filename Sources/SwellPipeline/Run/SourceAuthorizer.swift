import Foundation
import Logging
import SwellHTTP
import SwellJSON
import SwellLocks

/// Puts a source's credentials on its page requests (Pipeline file reference version 3, `auth`):
/// a bearer token, HTTP Basic, an API key in a header or the query, or an OAuth 2.0
/// client-credentials token (RFC 6749 §4.4).
///
/// The OAuth 2.0 token is fetched before the first request, kept in memory only (never in
/// the store, a log or the report: the redactor learns it), fetched again shortly before it
/// expires (`expires_in`), and once more when a page is answered 401.
///
/// Used on the source's fetch thread only, with that thread's HTTP client. The tokens are
/// kept for the whole run (`RunTokens`): the sources of one `auth` block — a `for_each`'s
/// items — share one.
struct SourceAuthorizer {
    private let source: SourceSpec
    private let redactor: Redactor
    private let logger: Logger
    private let tokens: RunTokens
    /// Token requests made (the report's `requests` counts them).
    private(set) var tokenRequests = 0

    init(source: SourceSpec, redactor: Redactor, logger: Logger, tokens: RunTokens) {
        self.source = source
        self.redactor = redactor
        self.logger = logger
        self.tokens = tokens
    }

    /// Whether a 401 on a page may be cured by a new token (`tokenRejected`, then one retry).
    var renewsOnUnauthorized: Bool {
        if case .oauth2? = source.auth { return true }
        return false
    }

    /// Adds the credentials to `request`, first fetching a token with `client` when none is
    /// kept or the kept one is about to expire.
    ///
    /// - Throws: `PipelineError(.unavailable)` when the token endpoint cannot be reached or
    ///   refuses the client (its URL named, never a secret).
    mutating func authorize(_ request: inout HTTPRequest, client: HTTPClient) throws(PipelineError) {
        switch source.auth {
        case nil:
            return
        case .bearer(let value)?:
            request.headers.append(HTTPHeader(name: "Authorization", value: "Bearer \(value)"))
        case .basic(let username, let password)?:
            request.headers.append(HTTPHeader(name: "Authorization", value: "Basic \(Self.base64("\(username):\(password)"))"))
        case .apiKey(let name, let value, let inQuery)?:
            if inQuery {
                request.url = HTTPLinks.setting(query: name, to: value, in: request.url)
            } else {
                request.headers.append(HTTPHeader(name: name, value: value))
                request.credentialHeaders.insert(name)
            }
        case .oauth2(let grant)?:
            if let kept = tokens.token(for: grant), kept.renewAt.map({ Date() < $0 }) ?? true {
                request.headers.append(HTTPHeader(name: "Authorization", value: "Bearer \(kept.value)"))
                return
            }
            tokenRequests += 1
            let fetched = try fetchToken(grant, client: client)
            tokens.keep(fetched, for: grant)
            request.headers.append(HTTPHeader(name: "Authorization", value: "Bearer \(fetched.value)"))
        }
    }

    /// A page was answered 401: the kept token is dropped, so the next `authorize` fetches another.
    mutating func tokenRejected() {
        if case .oauth2(let grant)? = source.auth { tokens.drop(for: grant) }
    }

    /// Asks the token endpoint for a token (RFC 6749 §4.4.2), with the source's retries.
    private func fetchToken(_ grant: OAuth2ClientCredentials, client: HTTPClient) throws(PipelineError) -> (value: String, renewAt: Date?) {
        var fields: [(name: String, value: String)] = [("grant_type", "client_credentials")]
        if let scope = grant.scope { fields.append(("scope", scope)) }
        if let audience = grant.audience { fields.append(("audience", audience)) }
        fields += grant.extra.map { ($0.name, $0.value) }
        var request = HTTPRequest(url: grant.tokenURL)
        request.method = "POST"
        request.timeout = source.timeout
        request.headers = [HTTPHeader(name: "Content-Type", value: "application/x-www-form-urlencoded"),
                           HTTPHeader(name: "Accept", value: "application/json")]
        if grant.credentialsInBody {
            fields += [("client_id", grant.clientID), ("client_secret", grant.clientSecret)]
        } else {
            // RFC 6749 §2.3.1: the id and secret are form-encoded, then joined for HTTP Basic.
            let credentials = HTTPLinks.formEncoded(grant.clientID) + ":" + HTTPLinks.formEncoded(grant.clientSecret)
            request.headers.append(HTTPHeader(name: "Authorization", value: "Basic \(Self.base64(credentials))"))
        }
        request.body = Array(HTTPLinks.formEncoded(fields).utf8)
        let asked = Date()
        var body: [UInt8] = []
        let endpoint = redactor(grant.tokenURL)
        do {
            _ = try client.fetch(request, policy: RetryPolicy(retries: source.retries),
                                 onAttempt: { _ in body.removeAll(keepingCapacity: true) },
                                 onBody: { body.append(contentsOf: $0) })
        } catch let error as HTTPError {
            if case .status(let status) = error.kind, status == 400 || status == 401 {
                throw PipelineError(.unavailable, redactor("source \(source.name): the token endpoint \(endpoint) refused the client (HTTP \(status)): check client_id, client_secret and scope"),
                                    underlying: TokenRequestFailure(error: error))
            }
            throw PipelineError(.unavailable, redactor("source \(source.name): cannot get a token from \(endpoint): \(error)"), underlying: TokenRequestFailure(error: error))
        } catch {
            throw PipelineError(.unavailable, redactor("source \(source.name): cannot get a token from \(endpoint): \(error)"), underlying: error)
        }
        let answer = try Self.token(in: body)
        guard let answer else {
            throw PipelineError(.unavailable, redactor("source \(source.name): the token endpoint \(endpoint) answered without an access_token (a JSON object with a string access_token was expected)"))
        }
        redactor.learn(answer.value)
        if let type = answer.type, type.lowercased() != "bearer" {
            throw PipelineError(.unavailable, redactor("source \(source.name): the token endpoint \(endpoint) gave a token of type \(type); Swell sends bearer tokens only"))
        }
        // Fetched again a tenth of its life (at most a minute) before it expires.
        let renewAt = answer.expiresIn.map { asked.addingTimeInterval($0 - min(60, $0 / 10)) }
        logger.debug("token fetched", metadata: ["source": "\(source.name)", "expires_in": "\(answer.expiresIn.map { "\($0)" } ?? "not given")"])
        return (answer.value, renewAt)
    }

    /// The token, its type and lifetime in a token endpoint's answer; nil when it holds no
    /// `access_token` string.
    private static func token(in body: [UInt8]) throws(PipelineError) -> (value: String, type: String?, expiresIn: Double?)? {
        // An answer that is not JSON is no token: the caller says so, naming the endpoint (its
        // body may hold secrets, so the parse error's excerpt is not shown).
        guard case .object(let object)? = try? JSONValue.parse(body), case .string(let value)? = object["access_token"], !value.isEmpty else { return nil }
        var type: String?
        if case .string(let text)? = object["token_type"] { type = text }
        var expiresIn: Double?
        switch object["expires_in"] {
        case .number(let number)?: expiresIn = number.double
        case .string(let text)?: expiresIn = Double(text)
        default: break
        }
        return (value, type, expiresIn.flatMap { $0 > 0 ? $0 : nil })
    }

    private static func base64(_ text: String) -> String {
        Data(text.utf8).base64EncodedString()
    }
}

/// The OAuth 2.0 tokens of a run, by grant: kept in memory only, for the run's length, so
/// that one `auth` block asks its token endpoint once (and again before expiry), whatever
/// the number of sources it serves. Sources run one after another; the lock is for the
/// sake of `Sendable`.
final class RunTokens: Sendable {
    private let kept = LockedValue<[Grant: (value: String, renewAt: Date?)]>([:])

    /// A grant as a dictionary key.
    private struct Grant: Hashable {
        let tokenURL: String, clientID: String, clientSecret: String, scope: String?, audience: String?, extra: [String]

        init(_ grant: OAuth2ClientCredentials) {
            tokenURL = grant.tokenURL
            clientID = grant.clientID
            clientSecret = grant.clientSecret
            scope = grant.scope
            audience = grant.audience
            extra = grant.extra.flatMap { [$0.name, $0.value] } + [grant.credentialsInBody ? "body" : "basic"]
        }
    }

    init() {}

    func token(for grant: OAuth2ClientCredentials) -> (value: String, renewAt: Date?)? {
        kept.withLock { $0[Grant(grant)] }
    }

    func keep(_ token: (value: String, renewAt: Date?), for grant: OAuth2ClientCredentials) {
        kept.withLock { $0[Grant(grant)] = token }
    }

    func drop(for grant: OAuth2ClientCredentials) {
        _ = kept.withLock { $0.removeValue(forKey: Grant(grant)) }
    }
}

/// Why a token request failed: kept apart from a page's `HTTPError`, so that the token
/// endpoint's 401 or 404 is not read as the page's (`PageFetcher`'s retry and `on_status`).
struct TokenRequestFailure: Error, CustomStringConvertible {
    let error: HTTPError
    var description: String { error.description }
}
