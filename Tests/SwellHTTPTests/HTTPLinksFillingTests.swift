import SwellHTTP
import Testing

/// `HTTPLinks.filling`: a value put into a URL template is encoded for the part it stands in,
/// so it cannot change the URL's shape; `origin(of:)` reads the scheme, host and port.

@Test(arguments: [
    ("https://h/repos/${item}/issues", "o/a", "https://h/repos/o/a/issues"),
    ("https://h/repos/${item}/issues", "a b?c#d%e", "https://h/repos/a%20b%3Fc%23d%25e/issues"),
    ("https://h/repos/${item}/issues?state=all", "x?state=closed&token=1", "https://h/repos/x%3Fstate%3Dclosed%26token%3D1/issues?state=all"),
    ("https://h/items?repo=${item}&n=1", "o/a&n=2+3 =", "https://h/items?repo=o%2Fa%26n%3D2%2B3%20%3D&n=1"),
    ("https://h/items?${item}=1", "a=b", "https://h/items?a%3Db=1"),
    ("https://h/items#${item}", "a/b c", "https://h/items#a%2Fb%20c"),
    ("https://h/x?q=#${item}", "?", "https://h/x?q=#%3F"),
    ("https://${item}.example/x/${item}", "tenant-1", "https://tenant-1.example/x/tenant-1"),
    ("file:///data/${item}.json", "a b", "file:///data/a%20b.json"),
    ("fixtures/${item}.json", "a b?#", "fixtures/a b?#.json"),
    ("${item}", "https://h/x?y=1", "https://h/x?y=1"),
    ("https://h/none", "x", "https://h/none"),
] as [(String, String, String)])
func aValueIsEncodedForThePartItFills(template: String, value: String, expected: String) {
    #expect(HTTPLinks.filling("${item}", with: value, in: template) == expected)
}

@Test(arguments: ["evil.example/x", "a@evil", "h:8080", "a b", "x#", ""])
func aValueThatWouldChangeTheHostIsRefused(value: String) {
    #expect(HTTPLinks.filling("${item}", with: value, in: "https://${item}.example/x") == (value.isEmpty ? "https://.example/x" : nil))
}

@Test func pathEncodingKeepsTheSlashesBetweenSegments() {
    #expect(HTTPLinks.pathEncoded("owner/my repo/50%") == "owner/my%20repo/50%25")
    #expect(HTTPLinks.pathEncoded("ünï") == "%C3%BCn%C3%AF")
    #expect(HTTPLinks.percentDecodedPath("a%2Fb+c%2e%zz") == "a/b+c.%zz")
}

@Test func anOriginIsSchemeHostAndPort() {
    #expect(HTTPLinks.origin(of: "https://API.example.com/x").map { "\($0.scheme) \($0.host) \($0.port ?? -1)" } == "https api.example.com 443")
    #expect(HTTPLinks.origin(of: "http://user:p@w@127.0.0.1:8080/x?y#z").map { "\($0.scheme) \($0.host) \($0.port ?? -1)" } == "http 127.0.0.1 8080")
    #expect(HTTPLinks.origin(of: "https://[::1]:8443/x").map { "\($0.host) \($0.port ?? -1)" } == "[::1] 8443")
    #expect(HTTPLinks.origin(of: "ftp://h/x").map { "\($0.port ?? -1)" } == "-1")
    #expect(HTTPLinks.origin(of: "fixtures/x.json") == nil)
    #expect(HTTPLinks.origin(of: "https://h:99999/x") == nil)
}
