import SwellJSON

/// `for_each` items that cannot be used (README, "Values from the API are untrusted"): each is
/// a bad record of its item, and `on_error` says what it does to the run.
extension PipelineRunner {
    /// `expansions` without those whose item cannot be used (`SourceSpec.itemRejection`). With
    /// `on_error: fail`, the first such item is the run's error (65) naming the source, the
    /// item (escaped) and why, before any of `expansions` runs; with `skip`, each goes to its
    /// expansion's rejects file (`{"source", "page", "index", "error", "record": {"item"}}`,
    /// the page being the source's url as the file writes it) with a warning, and the others run.
    ///
    /// - Throws: `PipelineError` `.data` (`fail`), or `.cannotCreate` when a rejects file
    ///   cannot be written.
    func usable(_ expansions: [SourceSpec]) throws(PipelineError) -> [SourceSpec] {
        var usable: [SourceSpec] = []
        for expansion in expansions {
            guard let rejection = expansion.itemRejection else {
                usable.append(expansion)
                continue
            }
            let source = expansion.forEach?.source ?? expansion.name
            switch expansion.onError {
            case .fail:
                throw PipelineError(.data, redactor("source \(source): for_each item \(rejection.index) \"\(rejection.shown)\" cannot be used: \(rejection.reason)"))
            case .skip:
                let rejects = RejectsWriter(path: expansion.rejects, source: expansion.name, redactor: redactor)
                let record = JSONValue.object(JSONObject(members: [("item", .string(rejection.item))]))
                try rejects.write(page: expansion.url, index: rejection.index, error: "for_each item cannot be used: \(rejection.reason)", record: record)
                try rejects.close()
                logger.warning("for_each item skipped: it cannot be used", metadata: [
                    "source": "\(source)", "item": "\(redactor(rejection.shown))", "index": "\(rejection.index)",
                    "error": "\(rejection.reason)", "rejects": "\(expansion.rejects)",
                ])
            }
        }
        return usable
    }
}
