import Foundation
import Yams

extension PipelineFileLoader {
    /// The source and export names of the pipeline file named among a command line's
    /// `words` (the first that ends in `.yml` or `.yaml` and can be read), for shell
    /// completion of `--only`. Read leniently, without validating or interpolating the file:
    /// empty when there is no such file or it is not YAML.
    public static func completionNames(words: [String]) -> [String] {
        for word in words where word.hasSuffix(".yml") || word.hasSuffix(".yaml") {
            // A completion offers what it can: a word that is not a readable YAML file is not the
            // pipeline (its error would have nowhere to go while the shell completes), so try the next.
            guard let text = try? String(contentsOfFile: word, encoding: .utf8),
                  let node = try? Yams.compose(yaml: text) else { continue }
            var names: [String] = []
            for key in ["sources", "exports"] {
                for item in node[key]?.sequence ?? [] {
                    if let name = item["name"]?.string { names.append(name) }
                }
            }
            return names
        }
        return []
    }
}
