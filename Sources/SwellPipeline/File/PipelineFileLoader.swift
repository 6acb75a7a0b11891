import Foundation
import SwellContexts
import Yams

/// Reads a pipeline file (YAML; JSON is YAML too), checks it against the
/// contract and the model it defines, and interpolates `${VAR}` and
/// `${VAR:-default}` in `url`, `headers` values and `store`.
///
/// Every problem is a `PipelineFileError` with the file, line and column.
/// Loading touches neither the store nor the network.
public struct PipelineFileLoader {
    /// The environment `${VAR}` reads from.
    public var environment: [String: String]

    /// A loader reading `${VAR}` from `environment` (default: the process's).
    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.environment = environment
    }

    /// Loads and validates the file at `path`.
    public func load(path: String) throws(PipelineFileError) -> PipelineFile {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw PipelineFileError(path: path, line: 1, column: 1, message: "cannot read the file: \(error.localizedDescription)")
        }
        return try load(text: text, path: path)
    }

    /// Loads and validates pipeline text; `path` names it in errors.
    public func load(text: String, path: String) throws(PipelineFileError) -> PipelineFile {
        let root: Node?
        do {
            root = try Yams.compose(yaml: text, .basic)
        } catch let error as YamlError {
            throw Self.error(from: error, path: path)
        } catch {
            throw PipelineFileError(path: path, line: 1, column: 1, message: "not YAML: \(error)")
        }
        guard let root else { throw PipelineFileError(path: path, line: 1, column: 1, message: "the file is empty") }
        var reader = PipelineFileReader(path: path, environment: environment)
        let pipeline = try reader.read(root)
        // The store opens a model only when the model's own validation passes: the same check
        // here, so a file that validates never fails at open for its model (the rules live in
        // `ManagedObjectModel`; the reader asks them too, with the line of the name).
        do {
            try pipeline.model.validate()
        } catch {
            let mark = root.mapping?["entities"]?.mark
            throw PipelineFileError(path: path, line: mark?.line ?? 1, column: mark?.column ?? 1, message: "the model cannot be opened: \(error)")
        }
        return pipeline
    }

    private static func error(from error: YamlError, path: String) -> PipelineFileError {
        switch error {
        case .scanner(let context, let problem, let mark, _), .parser(let context, let problem, let mark, _),
             .composer(let context, let problem, let mark, _):
            let detail = context.map { "\($0.text) " } ?? ""
            return PipelineFileError(path: path, line: mark.line, column: mark.column, message: "YAML syntax: \(detail)\(problem)")
        case .duplicatedKeysInMapping(let duplicates, let context):
            return PipelineFileError(path: path, line: context.mark.line, column: context.mark.column,
                                     message: "key(s) \(duplicates.map { "'\($0)'" }.joined(separator: ", ")) appear twice in one mapping")
        case .reader(let problem, _, _, _):
            return PipelineFileError(path: path, line: 1, column: 1, message: "YAML: \(problem)")
        default:
            return PipelineFileError(path: path, line: 1, column: 1, message: "YAML: \(error)")
        }
    }
}
