import ArgumentParser
import SwellPipeline

/// `swell`'s exit codes (sysexits, Command line reference): the one table from a failure's kind to the code
/// the process exits with. The library says what kind of failure it was; the command decides.
enum ExitStatus {
    /// Bad arguments or a pipeline file that does not validate.
    static let usage: Int32 = 64
    /// A bad record or page.
    static let data: Int32 = 65
    /// A source could not be had.
    static let unavailable: Int32 = 69
    /// An export, rejects or report file could not be written.
    static let cannotCreate: Int32 = 73
    /// The store could not be opened, read or written.
    static let io: Int32 = 74
    /// Another run holds the store or a source.
    static let locked: Int32 = 75

    /// The code for a failure of `kind`.
    static func code(for kind: PipelineError.Kind) -> Int32 {
        switch kind {
        case .usage: usage
        case .data: data
        case .unavailable: unavailable
        case .cannotCreate: cannotCreate
        case .io: io
        case .locked: locked
        case .interrupted, .other: 1   // the contract's "anything else": 75 means only a held store
        }
    }
}

extension ExitCode {
    /// The exit for `error`.
    init(_ error: PipelineError) {
        self.init(ExitStatus.code(for: error.kind))
    }
}
