import Foundation

extension HTTPClient {
    /// perform with retries per policy: before each attempt calls onAttempt(attemptNumber) so the consumer can reset its parser.
    ///
    /// Waits `policy.delay(...)` between attempts (blocking this thread), honouring Retry-After.
    /// Only retryable ``HTTPError``s are retried (connection failures, timeouts, 429, 5xx);
    /// errors thrown by `onBody` are rethrown unchanged at once.
    ///
    /// - Parameter wait: how a wait between attempts is spent: blocking this thread by default;
    ///   a caller that schedules differently (or a test that records the waits) gives its own.
    /// - Parameter shouldRetry: asked before each retry: false gives up at once with the last
    ///   attempt's error (a run that was cancelled meanwhile).
    /// - Returns: the final response and how many retries it took (0: the first attempt succeeded).
    /// - Throws: the last attempt's ``HTTPError``, or `onBody`'s error.
    public func fetch(_ request: HTTPRequest, policy: RetryPolicy, onAttempt: (Int) -> Void = { _ in },
                      wait: (TimeInterval) -> Void = { Thread.sleep(forTimeInterval: $0) },
                      shouldRetry: () -> Bool = { true },
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
                    guard httpError.isRetryable, attempt <= policy.retries, shouldRetry() else { throw httpError }
                    let delay = policy.delay(beforeRetry: attempt, retryAfter: httpError.retryAfter, random: &random)
                    if delay > 0 { wait(delay) }
                    attempt += 1
                }
            }
        }
    }
}
