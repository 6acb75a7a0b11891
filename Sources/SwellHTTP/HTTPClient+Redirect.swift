import Foundation

/// Redirects, followed by `HTTPClient.performOnce` rather than by libcurl, because
/// libcurl keeps sending custom headers (an API key in `X-Api-Key`) to whatever host a
/// redirect names; it holds back only `Authorization` and `Cookie`. Here every
/// credential header stays with the origin it was meant for.
extension HTTPClient {
    /// Redirects followed in one attempt, as libcurl's `CURLOPT_MAXREDIRS` was set.
    static let maxRedirects = 10

    /// The statuses that redirect (with a `Location`).
    static let redirectStatuses: Set<Int> = [301, 302, 303, 307, 308]

    /// Headers that always carry credentials.
    static let alwaysCredentialHeaders: Set<String> = ["authorization", "proxy-authorization", "cookie"]

    /// The request for the next hop of a redirect from `request` to `location` (absolute):
    /// a 303, and a 301 or 302 of anything but a GET, become a GET without a body (as
    /// libcurl and browsers do); 307 and 308 repeat the method and body. A hop to another
    /// origin (scheme, host or port) drops the credential headers.
    ///
    /// - Throws: `HTTPError` `.invalidURL` for a redirect to a scheme other than http or https.
    static func redirected(_ request: HTTPRequest, to location: String, status: Int, naming url: String) throws(HTTPError) -> HTTPRequest {
        guard let next = origin(of: location), next.hasPrefix("http://") || next.hasPrefix("https://") else {
            throw HTTPError(kind: .invalidURL, url: url, message: "redirected (\(status)) to \(location), which is not an http or https URL")
        }
        var hop = request
        hop.url = location
        if status == 303 || ((status == 301 || status == 302) && request.method != "GET") {
            hop.method = "GET"
            hop.body = nil
            hop.headers.removeAll { ["content-type", "content-length"].contains($0.name.lowercased()) }
        }
        if next != origin(of: request.url) {
            let dropped = alwaysCredentialHeaders.union(request.credentialHeaders.map { $0.lowercased() })
            hop.headers.removeAll { dropped.contains($0.name.lowercased()) }
            hop.credentialHeaders = []
        }
        return hop
    }

    /// `scheme://host:port` of an absolute URL, lower-cased, the port explicit; nil when it has no host
    /// (the key of server holds and host budgets in ``HTTPEngine``).
    public static func origin(of url: String) -> String? {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
              let host = components.host?.lowercased(), !host.isEmpty else { return nil }
        let port = components.port ?? (scheme == "https" ? 443 : 80)
        return "\(scheme)://\(host):\(port)"
    }
}
