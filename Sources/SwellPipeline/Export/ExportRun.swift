import Foundation
import SwellCSV
import SwellContexts
import SwellCalendar

/// Writes one export: a batched, streamed read of the entity (filtered,
/// sorted, the key breaking ties) on a private context, through the CSV
/// writer and gzip into a temporary file renamed into place.
struct ExportRun {
    let export: ExportSpec
    let entity: PipelineEntity
    /// What nil means in `where` (the file's `PipelineFile.predicateNilMatching`).
    let nilMatching: FetchPredicate.NilMatching
    /// The run's cancellation: looked at every few thousand rows; once cancelled, the export
    /// stops and its file is never put in place.
    var cancellation = RunCancellation()

    /// Throws the run's cancellation, looked at once every 4096 calls.
    func checkCancelled(_ rows: inout Int) throws {
        rows &+= 1
        if rows & 4095 == 0, let interrupted = cancellation.error { throw interrupted }
    }

    /// The fetch request: `where`, `sort`, then the key as the last tie-breaker.
    var request: FetchRequest {
        var request = FetchRequest(entityName: entity.name)
        if let predicate = export.predicate { request.predicate = FetchPredicate(format: predicate).nilMatching(nilMatching) }
        var sort = export.sort.map { FetchSortDescriptor(key: $0.attribute, ascending: $0.ascending) }
        for key in entity.key where !sort.contains(where: { $0.key == key }) {
            sort.append(FetchSortDescriptor(key: key, ascending: true))
        }
        request.sortDescriptors = sort
        return request
    }

    /// Runs on `context`'s queue. For a delta export, `position` is set to the history
    /// position to keep once the file is in place.
    func run(in context: ManagedObjectContext, position: inout HistoryToken?) throws(PipelineError) -> RunReport.Export {
        let started = Date()
        let digest = FileDigest()
        let output: CSVOutput
        do {
            output = export.isGzip
                ? try GzipFileOutput(path: export.path, level: export.gzipLevel, onFileBytes: digest.update)
                : try AtomicFileOutput(path: export.path, onFileBytes: digest.update)
        } catch {
            throw PipelineError(.cannotCreate, "export \(export.name): \(error)", underlying: error)
        }
        let writer = CSVWriter(output: output, escapeFormulas: export.escapeFormulas)
        do {
            if export.changesSinceLast {
                position = try runChanges(in: context, output: output, writer: writer)
            } else {
                let (columns, keyPaths) = try self.columns(in: context)
                if export.header { try writer.writeHeader(export.columns.map(\.name)) }
                let dates = DateWriter(formats: export.columns.map(\.format))
                var rows = 0
                try BulkSession(context).enumerateRowCursors(request, keyPaths: keyPaths) { row in
                    try checkCancelled(&rows)
                    for column in columns { try Self.write(row, column, dates: dates, to: writer) }
                    try writer.endRow()
                }
                if let interrupted = cancellation.error { throw interrupted }
            }
            try writer.finish()
        } catch let error as PipelineError {
            output.abort()
            throw error
        } catch let error as CSVError {
            output.abort()
            throw PipelineError(.cannotCreate, "export \(export.name): \(error)", underlying: error)
        } catch {
            output.abort()
            throw PipelineError(.io, "export \(export.name): reading the store failed: \(error)", underlying: error)
        }
        return RunReport.Export(name: export.name, path: export.path, rows: writer.rowsWritten, bytes: output.bytesWritten,
                                sha256: digest.hex, durationS: SourceRun.rounded(Date().timeIntervalSince(started)))
    }

    /// The exported columns (attributes by index; key paths read after the store's
    /// attributes, version 2) and the key paths to read.
    func columns(in context: ManagedObjectContext) throws -> ([Column], [KeyPathColumn]) {
        let stored = try BulkSession(context).entity(named: entity.name)
        var columns: [Column] = []
        var keyPaths: [KeyPathColumn] = []
        for (position, column) in export.columns.enumerated() {
            let format = column.format == nil ? nil : position
            if let index = entity.attributes.firstIndex(where: { $0.name == column.attribute }) {
                columns.append(Column(attribute: index, type: entity.attributes[index].type, format: format))
                continue
            }
            let path = column.attribute.split(separator: ".").map(String.init)
            keyPaths.append(KeyPathColumn(path: path, separator: column.join))
            let type = column.join == nil ? try Self.type(of: path, from: stored, in: context) : .string
            columns.append(Column(attribute: stored.attributes.count + keyPaths.count - 1, type: type, format: format))
        }
        return (columns, keyPaths)
    }

    /// The type of the attribute a to-one key path ends at.
    private static func type(of path: [String], from entity: EntityDescription, in context: ManagedObjectContext) throws -> AttributeType {
        var current = entity
        for name in path.dropLast() {
            guard let relationship = current.relationship(named: name) else { return .string }
            current = try BulkSession(context).entity(named: relationship.destination)
        }
        return current.attribute(named: path.last ?? "")?.type ?? .string
    }

    /// An exported column: the attribute's index and type, and, when it has a date format,
    /// its position among the export's columns (an index, not the string: copying a column
    /// per value then retains nothing).
    struct Column {
        var attribute: Int
        var type: AttributeType
        var format: Int?
    }

    /// Writes dates: ISO 8601 by default, or in a column's LDML `format` (with the export's own formatters).
    struct DateWriter {
        /// Each export column's format, by position.
        let formats: [String?]
        let patterns = DatePatterns()

        func write(_ seconds: Double, format: Int?, to writer: CSVWriter) throws {
            if let format, let pattern = formats[format] {
                try writer.writeValueField(patterns.string(fromSeconds: seconds, pattern: pattern))
                return
            }
            var text: (UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0)  // ISODate.maximumLength bytes
            try withUnsafeMutableBytes(of: &text) { raw in
                let bytes = raw.bindMemory(to: UInt8.self)
                let length = ISODate.write(fromSeconds: seconds, into: bytes)
                try writer.writeValueField(UnsafeBufferPointer(rebasing: bytes[..<length]))
            }
        }
    }

    /// Writes a value's CSV cell per the Values table, from the store's bytes in place;
    /// `dates` writes dates.
    static func write(_ row: StoreRowCursor, _ column: Column, dates: DateWriter, to writer: CSVWriter) throws {
        try row.withField(column.attribute) { field in
            switch (field, column.type) {
            case (.null, _):
                try writer.writeNullField()
            case (.text(let bytes), _):
                try writer.writeTextField(bytes)
            case (.integer(let int), .boolean):
                try writer.writeValueField(CSVFormat.boolean(int != 0))
            case (.integer(let int), .date):
                try dates.write(Double(int), format: column.format, to: writer)
            case (.integer(let int), .double):
                try writer.writeValueField(CSVFormat.double(Double(int)))
            case (.integer(let int), _):
                try writer.writeIntegerField(int)
            case (.real(let double), .date):
                try dates.write(double, format: column.format, to: writer)
            case (.real(let double), .integer):
                if let int = Int64(exactly: double) {
                    try writer.writeIntegerField(int)
                } else {
                    try writer.writeValueField(CSVFormat.double(double))
                }
            case (.real(let double), _):
                try writer.writeValueField(CSVFormat.double(double))
            }
        }
    }
}


/// The SHA-256 of a file, computed from its bytes as they are written (nothing is read back).
private final class FileDigest {
    private let digest = SHA256Digest()

    func update(_ bytes: UnsafeRawBufferPointer) {
        digest.update(bytes)
    }

    var hex: String { digest.finishHex() }
}
