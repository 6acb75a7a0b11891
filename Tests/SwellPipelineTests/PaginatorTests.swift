import SwellJSON
import Testing
@testable import SwellPipeline
import SwellPipelineTestSupport

/// Each `paginate` form's next URL, from what a page said: no HTTP.
@Suite struct PaginatorTests {
    private func page(_ url: String, records: Int = 1, captured: [[String]: JSONValue] = [:], link: String? = nil) -> FetchedPage {
        FetchedPage(url: url, records: records, captured: captured, linkHeader: link)
    }

    @Test func withoutPaginationTheFirstPageIsTheLast() {
        var paginator = Paginator(nil, sourceURL: "http://h/items")
        #expect(paginator.firstURL == "http://h/items")
        #expect(paginator.next(after: page("http://h/items")) == nil)
        #expect(Paginator.capturePaths(nil).isEmpty)
    }

    @Test func nextFollowsTheBodysURLRelativeToTheCurrentPage() throws {
        var paginator = Paginator(.next(path: ["links", "next"]), sourceURL: "http://h/api/p1")
        #expect(Paginator.capturePaths(.next(path: ["links", "next"])) == [["links", "next"]])
        #expect(paginator.next(after: page("http://h/api/p1", captured: [["links", "next"]: .string("p2")])) == "http://h/api/p2")
        #expect(paginator.next(after: page("http://h/api/p2", captured: [["links", "next"]: .string("https://o/x?a=1")])) == "https://o/x?a=1")
        #expect(paginator.next(after: page("http://h/api/p2", captured: [["links", "next"]: try JSONValue.parse(Array("3".utf8))])) == "http://h/api/3")
        for end: JSONValue? in [nil, .null, .string("")] {
            #expect(paginator.next(after: page("http://h/api/p2", captured: end.map { [["links", "next"]: $0] } ?? [:])) == nil)
        }
    }

    @Test func linkHeaderFollowsRelNext() {
        var paginator = Paginator(.linkHeader, sourceURL: "http://h/link")
        #expect(paginator.next(after: page("http://h/link", link: "</link2>; rel=\"next\"")) == "http://h/link2")
        #expect(paginator.next(after: page("http://h/link2", link: "</link>; rel=\"prev\"")) == nil)
        #expect(paginator.next(after: page("http://h/link2")) == nil)
    }

    @Test func pageCountsUpFromStartUntilAPageHasNoRecords() {
        var paginator = Paginator(.page(parameter: "page", start: 0), sourceURL: "http://h/paged?since=5")
        #expect(paginator.firstURL == "http://h/paged?since=5&page=0")
        #expect(paginator.next(after: page(paginator.firstURL, records: 2)) == "http://h/paged?since=5&page=1")
        #expect(paginator.next(after: page("http://h/paged?since=5&page=1", records: 1)) == "http://h/paged?since=5&page=2")
        #expect(paginator.next(after: page("http://h/paged?since=5&page=2", records: 0)) == nil)
    }

    @Test func cursorIsSentBackInItsParameterOnTheSourceURL() {
        let form = Pagination.cursor(path: ["meta", "next_cursor"], parameter: "cursor")
        var paginator = Paginator(form, sourceURL: "http://h/cursor?since=5")
        #expect(Paginator.capturePaths(form) == [["meta", "next_cursor"]])
        #expect(paginator.firstURL == "http://h/cursor?since=5")
        #expect(paginator.next(after: page("http://h/cursor?since=5", captured: [["meta", "next_cursor"]: .string("abc")]))
                == "http://h/cursor?since=5&cursor=abc")
        #expect(paginator.next(after: page("http://h/cursor?since=5&cursor=abc", captured: [["meta", "next_cursor"]: .string("d e")]))
                == "http://h/cursor?since=5&cursor=d%20e")
        #expect(paginator.next(after: page("http://h/cursor?since=5&cursor=abc", captured: [["meta", "next_cursor"]: .null])) == nil)
    }
}
