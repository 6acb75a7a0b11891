import SwellHTTP

/// A page's HTTP validators for conditional GET: its `ETag` and `Last-Modified`,
/// sent back as `If-None-Match` and `If-Modified-Since` on the next run.
///
/// They are kept in the store's metadata under `http.<source>.<url>` as the
/// text `etag + "\n" + lastModified` (an absent one as the empty string): stores
/// written before this type existed hold the same text.
struct HTTPValidators: Sendable, Equatable {
    var etag: String?
    var lastModified: String?

    init(etag: String?, lastModified: String?) {
        self.etag = etag
        self.lastModified = lastModified
    }

    /// The response's validators; nil when it has neither header.
    init?(response: HTTPResponse) {
        let etag = response.header("etag")
        let lastModified = response.header("last-modified")
        guard etag != nil || lastModified != nil else { return nil }
        self.init(etag: etag, lastModified: lastModified)
    }

    /// Reads the stored text; nil when it is not two lines. An empty line is an absent validator.
    init?(metadataText text: String) {
        let parts = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        self.init(etag: parts[0].isEmpty ? nil : String(parts[0]),
                  lastModified: parts[1].isEmpty ? nil : String(parts[1]))
    }

    /// The text kept in the store's metadata.
    var metadataText: String {
        (etag ?? "") + "\n" + (lastModified ?? "")
    }

    /// Makes `request` conditional on these validators.
    func apply(to request: inout HTTPRequest) {
        request.ifNoneMatch = etag
        request.ifModifiedSince = lastModified
    }

    /// The store metadata key of `url`'s validators for source `source`.
    static func metadataKey(source: String, url: String) -> String {
        "http.\(source).\(url)"
    }
}
