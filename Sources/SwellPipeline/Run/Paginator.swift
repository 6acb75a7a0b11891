import SwellHTTP
import SwellJSON

/// One page's request: its URL and, for a source with a body (version 3), the JSON body
/// sent with it.
struct PageRequest: Sendable, Equatable {
    var url: String
    var body: JSONValue?

    /// Tells the page from the others fetched in a run (pagination that returns to one fails).
    var identity: String { body.map { "\(url) \($0.jsonText)" } ?? url }
}

/// Where a source's next page is (Pipeline file reference, `paginate`), from what the
/// last page said: no pagination, a `next` URL in the body, a `Link` header, a
/// page-number parameter, a cursor parameter, or an offset (version 3).
///
/// A value whose only state is the page number or offset; it does no HTTP, so each form
/// is tested on its own. The page, cursor and offset forms set their parameter on the
/// source's request — in its URL's query, or at the top level of its JSON body
/// (`paginate.in: body`) — after the incremental parameter was set on it.
struct Paginator: Sendable {
    private let pagination: Pagination?
    private let source: PageRequest
    private let placement: ParameterPlacement
    /// Where a page says whether another follows (`has_more`): `false` there ends.
    private let hasMore: [String]?
    private var pageNumber: Int
    private var offset: Int

    init(_ pagination: Pagination?, source: PageRequest, placement: ParameterPlacement = .query, hasMore: [String]? = nil) {
        self.pagination = pagination
        self.hasMore = hasMore
        self.source = source
        self.placement = placement
        pageNumber = 1
        offset = 0
        switch pagination {
        case .page(_, let start)?: pageNumber = start
        case .offset(_, _, _, let start, _)?: offset = start
        default: break
        }
    }

    /// A paginator for a source without a body, its parameters in the query.
    init(_ pagination: Pagination?, sourceURL: String) {
        self.init(pagination, source: PageRequest(url: sourceURL))
    }

    /// The first page's request.
    var first: PageRequest {
        switch pagination {
        case .page(let parameter, _)?:
            return setting(parameter, to: .number(JSONNumber(Int64(pageNumber))), in: source)
        case .offset(let parameter, let limitParameter, let limit, _, _)?:
            return offsetRequest(parameter, limitParameter, limit)
        default:
            return source
        }
    }

    /// The first page's URL.
    var firstURL: String { first.url }

    /// The dot paths in a page's body that `pagination` (and `has_more`) read, for the page reader to capture.
    static func capturePaths(_ pagination: Pagination?, hasMore: [String]? = nil) -> [[String]] {
        let paths: [[String]] = switch pagination {
        case .next(let path)?: [path]
        case .cursor(let path, _)?: [path]
        case .offset(_, _, _, _, let total?)?: [total]
        default: []
        }
        return paths + (hasMore.map { [$0] } ?? [])
    }

    /// The next page's request after `page`; nil when `page` was the last.
    mutating func nextRequest(after page: FetchedPage) -> PageRequest? {
        if let hasMore, case .bool(false)? = page.captured[hasMore] { return nil }
        switch pagination {
        case nil:
            return nil
        case .next(let path)?:
            return Self.text(page.captured[path]).flatMap { HTTPLinks.resolve($0, against: page.url) }
                .map { PageRequest(url: $0, body: source.body) }
        case .linkHeader?:
            return page.linkHeader.flatMap { HTTPLinks.nextLink(in: $0, base: page.url) }.map { PageRequest(url: $0, body: source.body) }
        case .page(let parameter, _)?:
            pageNumber += 1
            return page.records > 0 ? setting(parameter, to: .number(JSONNumber(Int64(pageNumber))), in: source) : nil
        case .cursor(let path, let parameter)?:
            return Self.text(page.captured[path]).map { setting(parameter, to: .string($0), in: source) }
        case .offset(let parameter, let limitParameter, let limit, _, let totalPath)?:
            // A short page is the last; so is the one that reaches the total.
            guard page.records >= limit else { return nil }
            offset += limit
            if let totalPath, let total = page.captured[totalPath].flatMap(Self.integer), offset >= total { return nil }
            return offsetRequest(parameter, limitParameter, limit)
        }
    }

    /// Whether the requests after this one can be known before this one's answer (offset
    /// and page-number paging): the pages `guesses(after:count:)` gives.
    var guessesAhead: Bool { Self.guessesAhead(pagination) }

    /// Whether `pagination`'s requests can be known before the previous page's answer.
    static func guessesAhead(_ pagination: Pagination?) -> Bool {
        switch pagination {
        case .offset?, .page?: true
        default: false
        }
    }

    /// The `count` requests that follow the one this paginator gives next, if every page
    /// until then is full (offset and page-number paging; none for other forms). `latest` is
    /// the last page read, whose captured values (a total) still apply.
    func guesses(after latest: FetchedPage?, count: Int) -> [PageRequest] {
        guard guessesAhead, count > 0 else { return [] }
        var copy = self
        var guesses: [PageRequest] = []
        var full = FetchedPage(url: latest?.url ?? source.url)
        full.captured = latest?.captured ?? [:]
        if case .offset(_, _, let limit, _, _)? = pagination { full.records = limit } else { full.records = 1 }
        while guesses.count < count, let next = copy.nextRequest(after: full) {
            guesses.append(next)
            full.url = next.url
        }
        return guesses
    }

    /// The next page's URL after `page` (a source without a body); nil when `page` was the last.
    mutating func next(after page: FetchedPage) -> String? {
        nextRequest(after: page)?.url
    }

    private func offsetRequest(_ parameter: String, _ limitParameter: String?, _ limit: Int) -> PageRequest {
        var request = setting(parameter, to: .number(JSONNumber(Int64(offset))), in: source)
        if let limitParameter { request = setting(limitParameter, to: .number(JSONNumber(Int64(limit))), in: request) }
        return request
    }

    /// `request` with `parameter` set to `value`: in its query (as text), or as a member of its body.
    private func setting(_ parameter: String, to value: JSONValue, in request: PageRequest) -> PageRequest {
        var request = request
        switch placement {
        case .query:
            request.url = HTTPLinks.setting(query: parameter, to: Self.text(value) ?? "", in: request.url)
        case .body:
            request.body = request.body.map { Self.setting(parameter, to: value, in: $0) }
        case .graphQLVariables:
            guard case .object(let body)? = request.body else { return request }
            let variables = body["variables"] ?? .object(JSONObject())
            request.body = Self.setting("variables", to: Self.setting(parameter, to: value, in: variables), in: .object(body))
        }
        return request
    }

    /// `object` with member `name` set to `value` (in its place, or appended); other values as they are.
    private static func setting(_ name: String, to value: JSONValue, in object: JSONValue) -> JSONValue {
        guard case .object(var members) = object else { return object }
        if let index = members.members.firstIndex(where: { $0.key == name }) {
            members.members[index].value = value
        } else {
            members.members.append((name, value))
        }
        return .object(members)
    }

    /// A pagination value as text: a non-empty string or a number; nil ends.
    static func text(_ value: JSONValue?) -> String? {
        switch value {
        case .string(let text)?: text.isEmpty ? nil : text
        case .number(let number)?: number.text
        default: nil
        }
    }

    /// A total as a whole number: a JSON number, or a string of digits.
    private static func integer(_ value: JSONValue) -> Int? {
        switch value {
        case .number(let number): number.int64.map { Int($0) }
        case .string(let text): Int(text)
        default: nil
        }
    }
}

// MARK: Resuming (README, "Resuming a stopped source")

extension Paginator {
    /// What rebuilds `request` (the one `nextRequest(after: page)` just gave, or the first when
    /// `page` is nil) on a later run: its page number or offset, the cursor `page` gave, or its
    /// URL. nil for a source without pagination (it has one page: nothing to resume).
    func pagingState(of request: PageRequest, after page: FetchedPage?) -> PagingState? {
        switch pagination {
        case nil: return nil
        case .page?: return .page(pageNumber)
        case .offset?: return .offset(offset)
        case .cursor(let path, _)?:
            guard let page else { return .first }
            return Self.text(page.captured[path]).map(PagingState.cursor)
        case .next?, .linkHeader?:
            return page == nil ? .first : .url(request.url)
        }
    }

    /// Starts at `state` (what `pagingState` gave on an earlier run): the request it rebuilds,
    /// with the page number or offset to count on from; nil when it is not of this pagination.
    mutating func resuming(at state: PagingState) -> PageRequest? {
        switch (state, pagination) {
        case (.first, _):
            return first
        case (.page(let number), .page(let parameter, _)?):
            pageNumber = number
            return setting(parameter, to: .number(JSONNumber(Int64(number))), in: source)
        case (.offset(let value), .offset(let parameter, let limitParameter, let limit, _, _)?):
            offset = value
            return offsetRequest(parameter, limitParameter, limit)
        case (.cursor(let cursor), .cursor(_, let parameter)?):
            return setting(parameter, to: .string(cursor), in: source)
        case (.url(let url), .next?), (.url(let url), .linkHeader?):
            return PageRequest(url: url, body: source.body)
        default:
            return nil
        }
    }
}
