import Logging

/// What every stage of a run shares, made once by `PipelineRunner` and passed once to each
/// source's run: how the upsert stage is sized, where the run logs, the secrets it hides, the
/// progress counts, the one cancellation every stage reads, and the OAuth 2.0 tokens its
/// sources share. A source's own failure lives beside its counts (`SourceRunState`).
struct RunEnvironment: Sendable {
    /// `--workers`, `--batch-size`.
    var options: RunOptions
    /// Where the run logs (stderr in `swell`).
    var logger: Logger
    /// Hides the pipeline's secrets and the tokens its sources are given.
    var redactor: Redactor
    /// The counts the progress lines are read from.
    var progress: ProgressCounter
    /// Stops every stage of the run (`PipelineRunner.cancellation`: SIGINT, SIGTERM).
    var cancellation = RunCancellation()
    /// The run's OAuth 2.0 tokens (shared by its sources).
    var tokens = RunTokens()
    /// The file's environment variables that became secrets, name → value: a kept position
    /// names them instead of holding their values (`SecretTemplate`).
    var secretVariables: [String: String] = [:]
}
