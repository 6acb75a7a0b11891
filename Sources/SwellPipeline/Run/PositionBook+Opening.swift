import Logging
import SwellContexts

extension PositionBook {
    /// The book of `source`'s run (one of `forEachItems`, its `for_each`'s items in this run):
    /// reads the position an earlier run kept and decides where the run starts. A position is
    /// followed only when the source resumes (`resume`, and not `--restart`), its fingerprint is the
    /// source's now, its request can be filled back and its key chunks are all there; any other
    /// kept position is dropped (removed from the store now, logged at notice when the source
    /// changed; removed from the store when the run `begin`s) and the source starts at its first
    /// page. A run under `--restart` keeps positions as it goes, as any run: one that stops
    /// resumes where it stopped. Opening writes nothing: a `for_each`'s items ahead are opened
    /// while an earlier item runs.
    ///
    /// - Throws: `PipelineError` (`.io`) when the store cannot be read.
    static func open(source: SourceSpec, forEachItems: [String], container: PersistentContainer,
                     environment: RunEnvironment) throws(PipelineError) -> PositionBook {
        let resumes = source.resume
        let template = SecretTemplate(variables: environment.secretVariables, redactor: environment.redactor)
        let fingerprint = SourceFingerprint.of(source, forEachItems: forEachItems, template: template)
        let keepsPositions = resumes && source.pagination != nil
        let collectsKeys = source.mode == .replace || source.mode == .append
        func book(_ start: Start, _ resumed: SourcePosition?, earlierKeys: [KeyChunk] = [], dropped: [String: String?] = [:]) -> PositionBook {
            PositionBook(sourceName: source.name, keepsPositions: keepsPositions, keepsDoneMarker: resumes && source.forEach != nil,
                         start: start, resumed: resumed, fingerprint: fingerprint, template: template, logger: environment.logger,
                         collectsKeys: collectsKeys, earlierKeys: earlierKeys, dropped: dropped)
        }
        let reader = container.newBackgroundContext()
        reader.name = "\(source.name).position"
        let key = SourcePosition.metadataKey(source: source.name)
        let logger = environment.logger
        guard let text = try read(key, in: reader, source: source.name) else { return book(.firstPage, nil) }
        let kept = SourcePosition.decode(text)
        /// Drops the kept position (and its chunks: at `begin`) and starts at the first page.
        func drop(_ why: String?) -> PositionBook {
            if let why { logger.notice("\(why): it starts at its first page", metadata: ["source": "\(source.name)"]) }
            return book(.firstPage, nil, dropped: kept?.removal(source: source.name) ?? [key: nil])
        }
        guard resumes else { return drop(nil) }
        guard !environment.options.restart else {
            logger.info("--restart: the kept position is dropped", metadata: ["source": "\(source.name)"])
            return drop(nil)
        }
        guard let kept, kept.fingerprint == fingerprint else {
            return drop("the source changed in the file since it stopped (its URL, fields, pagination or for_each items): its kept position is dropped")
        }
        // A done marker the runner did not skip on (the item runs again, e.g. alone): it starts over.
        guard !kept.done else { return book(.firstPage, nil) }
        guard keepsPositions else { return drop(nil) }
        let start: Start
        switch kept.next {
        case nil: start = .nothingLeft
        case .cursor(let cursor)?:
            guard let filled = template.fill(cursor) else { return drop("the kept position names an environment variable this run does not have") }
            start = .at(.cursor(filled))
        case .url(let url)?:
            guard let filled = template.fill(url) else { return drop("the kept position names an environment variable this run does not have") }
            start = .at(.url(filled))
        case let other?: start = .at(other)
        }
        var chunks: [KeyChunk] = []
        for number in 0..<kept.keyChunks {
            guard let chunkText = try read(SourcePosition.keyChunkKey(source: source.name, number: number), in: reader, source: source.name),
                  let chunk = KeyChunk(text: chunkText) else {
                return drop("the keys kept with its position are incomplete")
            }
            chunks.append(chunk)
        }
        logger.notice("resuming where the last run stopped",
                      metadata: ["source": "\(source.name)", "pages_saved": "\(kept.pagesSaved)"])
        return book(start, kept, earlierKeys: chunks)
    }

    /// A replace sweeper that also hands its keys to the chunks and knows the earlier run's.
    func makeSweeper(entity: EntityDescription) -> ReplaceSweeper {
        let sweeper = ReplaceSweeper(entity: entity, collector: collector)
        for chunk in earlierKeys { sweeper.sawEarlier(chunk) }
        return sweeper
    }

    /// A `mode: append` source's builder keeps its keys for the chunks, and knows the keys
    /// the run it resumes saved (replace mode's keys go through its sweeper).
    func equip(_ builder: inout RecordBatchBuilder) {
        guard builder.source.mode == .append else { return }
        builder.keyCollector = collector
        builder.savedKeys = earlierKeys.isEmpty ? nil : SavedKeys(earlierKeys)
    }

    private static func read(_ key: String, in context: ManagedObjectContext, source: String) throws(PipelineError) -> String? {
        do {
            return try context.performAndWait { try context.storeMetadata(forKey: key) }
        } catch {
            throw PipelineError(.io, "source \(source): cannot read its kept position: \(error)", underlying: error)
        }
    }
}
