import SwellHTTP
import SwellJSON

extension HTTPRequest {
    /// The request a source sends for one of its pages: its headers, timeout and size
    /// limit, refusing an HTML page where JSON was expected. Used by `PageFetcher` and by
    /// `swell init` (`InitSample`), so both fetch the same way.
    init(source: SourceSpec, url: String) {
        self.init(url: url)
        headers = source.headers.map { HTTPHeader(name: $0.name, value: $0.value) }
        timeout = source.timeout
        maxBytes = source.maxBytes
        rejectsHTML = true
    }

    /// Marks the headers whose values hold a secret (`${VAR}` values, auth values) as
    /// credentials: a redirect to another origin does not carry them.
    mutating func markCredentialHeaders(_ redactor: Redactor) {
        for header in headers where redactor(header.value) != header.value {
            credentialHeaders.insert(header.name)
        }
    }

    /// Sends `body` as the request's JSON body (with `Content-Type: application/json`).
    mutating func setJSONBody(_ body: JSONValue) {
        self.body = Array(body.jsonText.utf8)
        headers.append(HTTPHeader(name: "Content-Type", value: "application/json"))
    }
}
