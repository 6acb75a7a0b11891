import Foundation

/// What a response says about its host's budget: how long every request to that host must
/// wait (Pipeline file reference, "Real networks": servers are obeyed whatever the file says).
///
/// - A `429` or `503` with `Retry-After` (delay-seconds or an HTTP-date) holds until then.
/// - `X-RateLimit-Remaining: 0` with `X-RateLimit-Reset` holds until that Unix time (GitHub's
///   form; a value below 10⁹ is read as seconds from now, as some servers send it).
/// - The IETF form, `RateLimit-Remaining: 0` with `RateLimit-Reset`, holds for that many seconds.
///
/// A pure function of the headers and the clock, so every form is tested on its own.
public enum ServerHold {
    /// Unix times below this are read as seconds from now (no server's epoch is that early).
    static let epochThreshold = 1_000_000_000.0

    /// Seconds from `now` the host asks every request to wait; nil when it asks for none.
    public static func seconds(status: Int?, headers: [HTTPHeader], now: Date = Date()) -> Double? {
        func value(_ name: String) -> String? {
            headers.last { $0.name == name }?.value.trimmingCharacters(in: .whitespaces)
        }
        var waits: [Double] = []
        if let status, status == 429 || status == 503, let retryAfter = value("retry-after"),
           let seconds = RetryPolicy.seconds(inRetryAfter: retryAfter, now: now) {
            waits.append(seconds)
        }
        if value("x-ratelimit-remaining").flatMap(Double.init) == 0, let reset = value("x-ratelimit-reset").flatMap(Double.init) {
            waits.append(reset < epochThreshold ? reset : reset - now.timeIntervalSince1970)
        }
        if value("ratelimit-remaining").flatMap(Double.init) == 0, let reset = value("ratelimit-reset").flatMap(Double.init) {
            waits.append(reset)
        }
        guard let longest = waits.max(), longest > 0 else { return nil }
        return longest
    }
}
