import Crypto
import Foundation
import SwellCSV
import SwellStore
import SwellCalendar

/// Writes one export: a batched, streamed read of the entity (filtered,
/// sorted, the key breaking ties) on a private context, through the CSV
/// writer and gzip into a temporary file renamed into place.
struct ExportRun {
    let export: ExportSpec
    let entity: PipelineEntity

    /// The fetch request: `where`, `sort`, then the key as the last tie-breaker.
    var request: FetchRequest {
        var request = FetchRequest(entityName: entity.name)
        if let predicate = export.predicate { request.predicate = FetchPredicate(format: predicate) }
        var sort = export.sort.map { FetchSortDescriptor(key: $0.attribute, ascending: $0.ascending) }
        for key in entity.key where !sort.contains(where: { $0.key == key }) {
            sort.append(FetchSortDescriptor(key: key, ascending: true))
        }
        request.sortDescriptors = sort
        return request
    }

    /// Runs on `context`'s queue.
    func run(in context: ManagedObjectContext) throws(PipelineError) -> RunReport.Export {
        let started = Date()
        let output: CSVOutput
        do {
            output = export.isGzip ? try GzipFileOutput(path: export.path, level: export.gzipLevel) : try AtomicFileOutput(path: export.path)
        } catch {
            throw PipelineError(.cannotCreate, "export \(export.name): \(error)")
        }
        let writer = CSVWriter(output: output, escapeFormulas: export.escapeFormulas)
        let columns: [(index: Int, type: AttributeType, format: String?)] = export.columns.compactMap { column in
            guard let index = entity.attributes.firstIndex(where: { $0.name == column.attribute }) else { return nil }
            return (index, entity.attributes[index].type, column.format)
        }
        do {
            if export.header { try writer.writeHeader(export.columns.map(\.name)) }
            var cells = [CSVCell](repeating: .null, count: columns.count)
            try context.enumerateRows(request) { _, values in
                for (position, column) in columns.enumerated() {
                    cells[position] = Self.cell(values[column.index], type: column.type, format: column.format)
                }
                try writer.writeRow(cells)
            }
            try writer.finish()
        } catch let error as CSVError {
            output.abort()
            throw PipelineError(.cannotCreate, "export \(export.name): \(error)")
        } catch {
            output.abort()
            throw PipelineError(.io, "export \(export.name): reading the store failed: \(error)")
        }
        let (bytes, digest) = try Self.digest(of: export.path)
        return RunReport.Export(name: export.name, path: export.path, rows: writer.rowsWritten, bytes: bytes, sha256: digest,
                                durationS: SourceRun.rounded(Date().timeIntervalSince(started)))
    }

    /// A value's CSV cell per the Values table.
    static func cell(_ value: StoreValue, type: AttributeType, format: String?) -> CSVCell {
        switch (value, type) {
        case (.null, _): return .null
        case (.text(let text), _): return .text(text)
        case (.integer(let int), .boolean): return .value(CSVFormat.boolean(int != 0))
        case (.integer(let int), .date): return .value(date(Double(int), format: format))
        case (.integer(let int), .double): return .value(CSVFormat.double(Double(int)))
        case (.integer(let int), _): return .value(CSVFormat.integer(int))
        case (.real(let double), .date): return .value(date(double, format: format))
        case (.real(let double), .integer):
            if let int = Int64(exactly: double) { return .value(CSVFormat.integer(int)) }
            return .value(CSVFormat.double(double))
        case (.real(let double), _): return .value(CSVFormat.double(double))
        }
    }

    private static func date(_ seconds: Double, format: String?) -> String {
        format.map { CSVFormat.date(seconds, pattern: $0) } ?? ISODate.string(fromSeconds: seconds)
    }

    /// The file's size and SHA-256 (hex).
    static func digest(of path: String) throws(PipelineError) -> (Int64, String) {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw PipelineError(.cannotCreate, "cannot read back \(path)")
        }
        defer { try? handle.close() }
        var hasher = SHA256()
        var total: Int64 = 0
        while true {
            let chunk = handle.readData(ofLength: 1 << 20)
            if chunk.isEmpty { break }
            total += Int64(chunk.count)
            hasher.update(data: chunk)
        }
        let hex = hasher.finalize().map { String(format: "%02x", $0) }.joined()
        return (total, hex)
    }
}
