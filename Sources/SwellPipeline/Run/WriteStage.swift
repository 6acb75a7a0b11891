/// How a source's records are written: chosen once per source, here, from the shape of its
/// records and its mode (DocC "Threads of a run", the table of write stages). Every stage
/// reads its pages with the projection (`ProjectionPages`); they differ in what the fetch
/// thread reads records into and in who writes them. `--batch-size` means one thing in
/// each: the records of one commit (one batch insert, or one worker context's save), so a
/// batch is also a resume point.
enum WriteStage {
    /// Flat records merged by key (no nested mappings; `upsert`, `insert` or `replace`): read
    /// into columns on the fetch thread (`ColumnRecordSink`); `ColumnWriter`'s comparer and
    /// writer threads compare each batch ahead and commit it as one batch insert.
    case columns
    /// Records whose nested mappings have the shapes `GraphShape` admits (not appended):
    /// read into graph batches on the fetch thread (`GraphRecordSink`); `GraphWriter`
    /// commits each batch's objects and links as one transaction, in the records' order.
    case graph(GraphShape)
    /// Appended records, and records whose nested mappings have other shapes: read as
    /// trees (`TreeRecordSink`) and routed by key to `workers` `UpsertWorker`s on child
    /// contexts of the view context. A flat appended source has `--workers` of them (their
    /// key look-ups run side by side); records that nest have one, so the later record
    /// wins for links as for values.
    case objects(workers: Int)

    /// The stage for `source`: `graphShape` is asked only for nested records that are not
    /// appended (it reads the store's model); `workers` is `--workers`.
    static func choose(for source: SourceSpec, workers: Int, graphShape: () -> GraphShape?) -> WriteStage {
        if source.mode == .append { return .objects(workers: source.nested.isEmpty ? workers : 1) }
        if source.nested.isEmpty { return .columns }
        if let shape = graphShape() { return .graph(shape) }
        return .objects(workers: 1)
    }

    /// The stage's name in logs and reports.
    var name: String {
        switch self {
        case .columns: "columns"
        case .graph: "graph"
        case .objects: "objects"
        }
    }
}
