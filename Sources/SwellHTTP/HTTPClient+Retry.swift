import Foundation

extension HTTPClient {
    /// perform with retries per policy: before each attempt calls onAttempt(attemptNumber) so the consumer can reset its parser.
    ///
    /// Waits `policy.delay(...)` between attempts (blocking this thread), honouring Retry-After.
    /// Only retryable ``HTTPError``s are retried (connection failures, timeouts, 429, 5xx);
    /// errors thrown by `onBody` are rethrown unchanged at once.
    ///
    /// - Returns: the final response and how many retries it took (0: the first attempt succeeded).
    /// - Throws: the last attempt's ``HTTPError``, or `onBody`'s error.
    public func fetch(_ request: HTTPRequest, policy: RetryPolicy, onAttempt: (Int) -> Void = { _ in },
                      onBody: (UnsafeRawBufferPointer) throws -> Void) throws -> (response: HTTPResponse, retries: Int) {
        var random = SystemRandomNumberGenerator()
        var attempt = 1
        while true {
            onAttempt(attempt)
            do {
                return (try performOnce(request, onBody: onBody), attempt - 1)
            } catch {
                switch error {
                case .body(let bodyError):
                    throw bodyError
                case .http(let httpError):
                    guard httpError.isRetryable, attempt <= policy.retries else { throw httpError }
                    let wait = policy.delay(beforeRetry: attempt, retryAfter: httpError.retryAfter, random: &random)
                    if wait > 0 { Thread.sleep(forTimeInterval: wait) }
                    attempt += 1
                }
            }
        }
    }
}
