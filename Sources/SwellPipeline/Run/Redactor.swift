/// Hides values that came from the environment (tokens, passwords) in every
/// text Swell prints or writes: logs, errors, the report, the rejects file.
public struct Redactor: Sendable {
    /// The values to hide, longest first (so a secret containing another is hidden whole).
    private let secrets: [String]

    public init(secrets: some Sequence<String>) {
        self.secrets = Set(secrets).filter { $0.count >= 3 }.sorted { $0.count > $1.count }
    }

    /// `text` with every secret replaced by `***`.
    public func callAsFunction(_ text: String) -> String {
        guard !secrets.isEmpty else { return text }
        var result = text
        for secret in secrets where result.contains(secret) {
            result = result.replacingOccurrences(of: secret, with: "***")
        }
        return result
    }
}
