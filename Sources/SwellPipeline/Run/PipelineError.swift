/// Why a run failed: the kind of failure (which `swell` turns into its exit code), a
/// message naming what the user needs to find it, and the error underneath, if any.
public struct PipelineError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure. `swell` exits with a sysexits code for each (listed per case).
    public enum Kind: Sendable, Equatable, CaseIterable {
        /// Bad arguments or a pipeline file that does not validate (`swell`: 64).
        case usage
        /// A bad record with `on_error: fail`, or a page that is not valid JSON / NDJSON (65).
        case data
        /// A source could not be had: connection, DNS, TLS, HTTP status after the retries (69).
        case unavailable
        /// An export or rejects file could not be written (73).
        case cannotCreate
        /// The store could not be opened, read or written (74).
        case io
        /// Another writing run holds the store, or a source (75).
        case locked
        /// The run was stopped from outside (SIGINT, SIGTERM) after saving what it had
        /// fetched (`swell`: 1, the contract's "anything else"; run it again).
        case interrupted
        /// Anything else (1).
        case other
    }

    /// What kind of failure.
    public var kind: Kind
    /// What went wrong, naming what the user needs to find it (secrets redacted).
    public var message: String
    /// The error that caused this one, as thrown (a `StoreError`, `HTTPError`, `CSVError`,
    /// `JSONError`, …), for callers that switch on it. Unlike `message`, it is not redacted.
    public var underlying: (any Error)?

    /// A failure of `kind` saying `message`, caused by `underlying`.
    public init(_ kind: Kind, _ message: String, underlying: (any Error)? = nil) {
        self.kind = kind
        self.message = message
        self.underlying = underlying
    }

    /// The message.
    public var description: String { message }
}
