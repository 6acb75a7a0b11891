import Foundation
import SwellHTTP

/// How a run uses the network (Pipeline file reference, "Real networks"): requests in flight at
/// once, pages requested ahead, and the budgets a request to a host, for a source, takes
/// tokens from. Made once by `PipelineRunner` from the file and the flags.
struct NetworkPlan: Sendable {
    /// Requests in flight at once across the run (1: one at a time, versions 1–3).
    var concurrency: Int
    /// A host's budget for a request URL: its bucket key, cap and token bucket.
    var host: @Sendable (_ url: String) -> (key: String, cap: Int?, bucket: TokenBucketSpec?)? = { _ in nil }
    /// A source's own bucket, shared by all of a `for_each`'s items (keyed by the name in the file).
    var sourceBucket: @Sendable (SourceSpec) -> TokenBucketSpec? = { _ in nil }
    /// Pages of a source requested ahead.
    var prefetch: @Sendable (SourceSpec) -> Int = { _ in 1 }
    /// The run's room for pages ahead of the page loop, shared by all its streams.
    var pagesAhead = PagesAhead()

    /// One request at a time, no budgets of the file's (a source run on its own).
    static var sequential: NetworkPlan { NetworkPlan(concurrency: 1) }

    /// The budgets of a request of `source` to `url` (its origin `origin`).
    func budgets(source: SourceSpec, url: String, origin: String) -> (cap: Int?, buckets: [TokenBucketSpec]) {
        let host = host(url)
        var buckets: [TokenBucketSpec] = []
        if let bucket = host?.bucket { buckets.append(bucket) }
        if let bucket = sourceBucket(source) { buckets.append(bucket) }
        return (host?.cap, buckets)
    }
}
