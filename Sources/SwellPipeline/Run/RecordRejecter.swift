import SwellJSON

/// What happens to a bad record (Pipeline file reference, `on_error`): with `skip` it goes to
/// the rejects file; with `fail` it becomes the run's error, naming the page, the
/// record's index, the attribute and why. One place for both ways a record is read.
struct RecordRejecter: Sendable {
    let source: SourceSpec
    let rejects: RejectsWriter
    let redactor: Redactor

    /// Rejects `record` (record `index` of `page`): nil after writing it to the rejects
    /// file (`skip`); the run's error for it (`fail`).
    ///
    /// - Throws: `PipelineError` when the rejects file cannot be written.
    func reject(page: String, index: Int, record: JSONValue, message: String, attribute: String?) throws(PipelineError) -> PipelineError? {
        switch source.onError {
        case .skip:
            try rejects.write(page: page, index: index, error: message, record: record)
            return nil
        case .fail:
            return PipelineError(.data, redactor("source \(source.name): bad record at page \(page), index \(index), attribute \(attribute ?? "-"): \(message)"))
        }
    }
}
