/// Why a run failed, by the exit code `swell` gives it (sysexits).
public struct PipelineError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure, which decides the exit code.
    public enum Kind: Sendable, Equatable {
        /// 64: bad arguments or a pipeline file that does not validate.
        case usage
        /// 65: a bad record with `on_error: fail`, or a page that is not valid JSON / NDJSON.
        case data
        /// 69: a source could not be had (connection, DNS, TLS, HTTP status after the retries).
        case unavailable
        /// 73: an export or rejects file could not be written.
        case cannotCreate
        /// 74: the store could not be opened, read or written.
        case io
        /// 75: another writing run holds the store.
        case locked
        /// 1: anything else.
        case other
    }

    /// What kind of failure: it decides the exit code.
    public var kind: Kind
    /// What went wrong, naming what the user needs to find it.
    public var message: String

    /// A failure of `kind` saying `message`.
    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// The process exit code for this failure.
    public var exitCode: Int32 {
        switch kind {
        case .usage: 64
        case .data: 65
        case .unavailable: 69
        case .cannotCreate: 73
        case .io: 74
        case .locked: 75
        case .other: 1
        }
    }

    /// The message.
    public var description: String { message }
}
