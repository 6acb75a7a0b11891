import SwellHTTP
import Testing
@testable import SwellPipeline
import SwellPipelineTestSupport

/// Conditional GET's validators and their text in the store's metadata.
@Suite struct HTTPValidatorsTests {
    @Test func validatorsRoundTripThroughTheMetadataText() {
        let both = HTTPValidators(etag: "\"v1\"", lastModified: "Wed, 21 Oct 2015 07:28:00 GMT")
        #expect(both.metadataText == "\"v1\"\nWed, 21 Oct 2015 07:28:00 GMT")
        for validators in [both, HTTPValidators(etag: "W/\"x\"", lastModified: nil), HTTPValidators(etag: nil, lastModified: "Thu, 01 Jan 1970 00:00:00 GMT")] {
            #expect(HTTPValidators(metadataText: validators.metadataText) == validators)
        }
    }

    @Test func textWrittenByEarlierVersionsStillReads() {
        // The text stores hold: ETag, a line feed, Last-Modified; an absent one is empty.
        #expect(HTTPValidators(metadataText: "\"v1\"\n") == HTTPValidators(etag: "\"v1\"", lastModified: nil))
        #expect(HTTPValidators(metadataText: "\nWed, 21 Oct 2015 07:28:00 GMT") == HTTPValidators(etag: nil, lastModified: "Wed, 21 Oct 2015 07:28:00 GMT"))
        #expect(HTTPValidators(metadataText: "\n") == HTTPValidators(etag: nil, lastModified: nil))
        #expect(HTTPValidators(metadataText: "\"v1\"") == nil)
        #expect(HTTPValidators(metadataText: "a\nb\nc") == nil)
        #expect(HTTPValidators.metadataKey(source: "items", url: "http://h/items?page=2") == "http.items.http://h/items?page=2")
    }

    @Test func aResponsesValidatorsMakeTheNextRequestConditional() {
        let response = HTTPResponse(status: 200, headers: [HTTPHeader(name: "etag", value: "\"v2\"")], effectiveURL: "http://h/x", bodyBytes: 2)
        let validators = HTTPValidators(response: response)
        #expect(validators == HTTPValidators(etag: "\"v2\"", lastModified: nil))
        #expect(validators?.metadataText == "\"v2\"\n")
        var request = HTTPRequest(url: "http://h/x")
        validators?.apply(to: &request)
        #expect(request.ifNoneMatch == "\"v2\"")
        #expect(request.ifModifiedSince == nil)
        #expect(HTTPValidators(response: HTTPResponse(status: 200, headers: [], effectiveURL: "http://h/x", bodyBytes: 0)) == nil)
    }
}
