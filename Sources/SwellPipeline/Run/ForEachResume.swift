import Logging
import SwellContexts

/// A `for_each`'s items across a stop (README, "Resuming a stopped source"): an item that
/// completed keeps a done marker in its position's place (`PositionBook.completion`); the
/// next run skips those items — it does not request them again — and resumes the stopped one.
/// When the run finishes the `for_each`'s last item, every item's marker goes, so the next run
/// starts over as after any completed source.
///
/// Used by `PipelineRunner` on its run thread, item after item, in file order.
struct ForEachResume {
    let container: PersistentContainer
    let template: SecretTemplate
    let restart: Bool
    let logger: Logger

    /// The items of `source`'s `for_each` in this run (`candidates`: the sources it was
    /// expanded among); empty when it is not a `for_each` item.
    static func items(of source: SourceSpec, among candidates: [SourceSpec]) -> [String] {
        guard let group = source.forEach?.source else { return [] }
        return candidates.compactMap { $0.forEach?.source == group ? $0.forEach?.item : nil }
    }

    /// The report entry of `source` when it is an item a stopped run completed (`items`: its
    /// `for_each`'s items in this run), with `resumed_from` its pages; nil when it runs.
    func completedItem(_ source: SourceSpec, items: [String]) throws(PipelineError) -> RunReport.Source? {
        guard source.forEach != nil, source.resume, !restart else { return nil }
        let text = try read(SourcePosition.metadataKey(source: source.name), source: source.name)
        guard let marker = text.flatMap(SourcePosition.decode), marker.done,
              marker.fingerprint == SourceFingerprint.of(source, forEachItems: items, template: template) else { return nil }
        logger.notice("for_each item completed before the stop: not requested again", metadata: ["source": "\(source.name)"])
        var entry = RunReport.Source(name: source.name, entity: source.entity)
        entry.resumedFrom = marker.pagesSaved
        return entry
    }

    /// `source` ran or was skipped: after its `for_each`'s last item, every item's done marker goes.
    func itemFinished(_ source: SourceSpec, among candidates: [SourceSpec]) throws(PipelineError) {
        guard let group = source.forEach?.source else { return }
        let members = candidates.filter { $0.forEach?.source == group }
        guard members.last?.name == source.name else { return }
        let writer = container.writerContext
        do {
            try writer.performAndWait {
                for member in members { writer.setStoreMetadata(nil, forKey: SourcePosition.metadataKey(source: member.name)) }
                try writer.save()
            }
        } catch {
            throw PipelineError(.io, "source \(group): its for_each completed, but the items' done markers could not be removed: \(error)",
                                underlying: error)
        }
    }

    private func read(_ key: String, source: String) throws(PipelineError) -> String? {
        let reader = container.newBackgroundContext()
        do {
            return try reader.performAndWait { try reader.storeMetadata(forKey: key) }
        } catch {
            throw PipelineError(.io, "source \(source): cannot read its kept position: \(error)", underlying: error)
        }
    }
}
