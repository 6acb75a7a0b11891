import SwellHTTP
import Testing

@Test func nextLinkPicksRelNextAmongSeveralRelsAndQuotedParams() {
    let header = #"<https://api.example.com/items?page=1>; rel="first", "#
        + #"<https://api.example.com/items?page=9>; title="a, b; c"; rel="last", "#
        + #"</items?page=3&per=50>; type="application/json"; rel="prefetch NEXT""#
    #expect(HTTPLinks.nextLink(in: header, base: "https://api.example.com/items?page=2") == "https://api.example.com/items?page=3&per=50")
}

@Test func nextLinkAcceptsUnquotedRelAndRelativeTargets() {
    #expect(HTTPLinks.nextLink(in: "<page-3.json>;rel=next", base: "http://h/data/page-2.json") == "http://h/data/page-3.json")
}

@Test func nextLinkIsNilWithoutNext() {
    #expect(HTTPLinks.nextLink(in: #"<https://h/x?page=1>; rel="prev", <https://h/x?page=4>; rel="last""#, base: "https://h/x") == nil)
    #expect(HTTPLinks.nextLink(in: #"<https://h/next-ish>; title="rel=next""#, base: "https://h/x") == nil)
    #expect(HTTPLinks.nextLink(in: "", base: "https://h/x") == nil)
}

@Test(arguments: [
    ("https://other.example/p?x=1", "https://api.example.com/v1/items", "https://other.example/p?x=1"),
    ("/v2/items?page=2", "https://api.example.com/v1/items?page=1", "https://api.example.com/v2/items?page=2"),
    ("items?page=2", "https://api.example.com/v1/list?page=1", "https://api.example.com/v1/items?page=2"),
    ("../v2/items", "https://api.example.com/v1/deep/list", "https://api.example.com/v1/v2/items"),
    ("?page=3", "https://api.example.com/v1/items?page=2", "https://api.example.com/v1/items?page=3"),
    ("//cdn.example/p", "https://api.example.com/v1/items", "https://cdn.example/p"),
    ("page-2.json", "fixtures/a/page-1.json", "fixtures/a/page-2.json"),
    ("../b/page-2.json", "fixtures/a/page-1.json", "fixtures/b/page-2.json"),
    ("page-2.json", "page-1.json", "page-2.json"),
    ("/srv/data/p2.json", "fixtures/a/page-1.json", "/srv/data/p2.json"),
    ("page-2.json", "file:///srv/data/page-1.json", "file:///srv/data/page-2.json"),
])
func resolveHandlesEachKindOfReference(reference: String, base: String, expected: String) {
    #expect(HTTPLinks.resolve(reference, against: base) == expected)
}

@Test func resolveGivesNilForAnEmptyReference() {
    #expect(HTTPLinks.resolve("", against: "https://h/x") == nil)
    #expect(HTTPLinks.resolve("  ", against: "fixtures/a.json") == nil)
}

@Test func settingQueryAppendsReplacesAndEncodes() {
    #expect(HTTPLinks.setting(query: "page", to: "2", in: "https://h/items") == "https://h/items?page=2")
    #expect(HTTPLinks.setting(query: "page", to: "3", in: "https://h/items?page=2&per=50") == "https://h/items?page=3&per=50")
    #expect(HTTPLinks.setting(query: "since", to: "2024-05-01T06:30:00+02:00 & more", in: "https://h/i?a=1#top")
        == "https://h/i?a=1&since=2024-05-01T06%3A30%3A00%2B02%3A00%20%26%20more#top")
    #expect(HTTPLinks.setting(query: "cursor", to: "é/=", in: "https://h/i?cursor=old&x=1&cursor=older")
        == "https://h/i?cursor=%C3%A9%2F%3D&x=1")
}
