import SwellHTTP
import SwellJSON

/// Where a source's next page is (pipeline-file.md, `paginate`), from what the
/// last page said: no pagination, a `next` URL in the body, a `Link` header, a
/// page-number parameter, or a cursor parameter.
///
/// A value whose only state is the page number; it does no HTTP, so each form
/// is tested on its own. The page and cursor forms set their parameter on the
/// source's URL (after the incremental parameter was set on it).
struct Paginator: Sendable {
    private let pagination: Pagination?
    private let sourceURL: String
    private var pageNumber: Int

    init(_ pagination: Pagination?, sourceURL: String) {
        self.pagination = pagination
        self.sourceURL = sourceURL
        if case .page(_, let start)? = pagination {
            pageNumber = start
        } else {
            pageNumber = 1
        }
    }

    /// The first page's URL.
    var firstURL: String {
        if case .page(let parameter, _)? = pagination {
            return HTTPLinks.setting(query: parameter, to: String(pageNumber), in: sourceURL)
        }
        return sourceURL
    }

    /// The dot paths in a page's body that `pagination` reads (for the page reader to capture).
    static func capturePaths(_ pagination: Pagination?) -> [[String]] {
        switch pagination {
        case .next(let path)?: [path]
        case .cursor(let path, _)?: [path]
        default: []
        }
    }

    /// The next page's URL after `page`; nil when `page` was the last.
    mutating func next(after page: FetchedPage) -> String? {
        switch pagination {
        case nil:
            return nil
        case .next(let path)?:
            return Self.text(page.captured[path]).flatMap { HTTPLinks.resolve($0, against: page.url) }
        case .linkHeader?:
            return page.linkHeader.flatMap { HTTPLinks.nextLink(in: $0, base: page.url) }
        case .page(let parameter, _)?:
            pageNumber += 1
            return page.records > 0 ? HTTPLinks.setting(query: parameter, to: String(pageNumber), in: sourceURL) : nil
        case .cursor(let path, let parameter)?:
            return Self.text(page.captured[path]).map { HTTPLinks.setting(query: parameter, to: $0, in: sourceURL) }
        }
    }

    /// A pagination value as text: a non-empty string or a number; nil ends.
    static func text(_ value: JSONValue?) -> String? {
        switch value {
        case .string(let text)?: text.isEmpty ? nil : text
        case .number(let number)?: number.text
        default: nil
        }
    }
}
