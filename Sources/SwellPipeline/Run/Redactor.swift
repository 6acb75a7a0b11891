import Foundation
import SwellHTTP
import SwellLocks

/// Hides values that came from the environment (tokens, passwords) in every
/// text Swell prints or writes: logs, errors, the report, the rejects file —
/// and the password of any URL (`postgres://user:password@host/db`) or
/// connection string (`password=…`), wherever it came from. Secrets learnt during a run
/// (a token from a token endpoint) are hidden from then on by every copy of the redactor.
public struct Redactor: Sendable {
    /// The values to hide, longest first (so a secret containing another is hidden whole).
    private let secrets: [String]
    /// Values of one or two characters (`US`, `50`): hidden only where they stand alone —
    /// not inside a longer word or number, which would make every message unreadable.
    private let shortSecrets: [NSRegularExpression]
    /// Secrets learnt while running, shared by every copy, longest first.
    private let learnt = LockedValue<[String]>([])

    /// A redactor hiding `secrets`, also as they appear percent- or form-encoded in a URL's
    /// query; one of one or two characters where it stands alone (between characters that
    /// are not letters or digits).
    public init(secrets: some Sequence<String>) {
        let all = Set(secrets)
        self.secrets = Self.forms(of: all.filter { $0.count >= 3 })
        shortSecrets = Self.forms(of: all.filter { (1...2).contains($0.count) }).map { secret in
            // An escaped literal between lookarounds: always a valid pattern.
            try! NSRegularExpression(pattern: "(?<![\\p{L}\\p{N}])" + NSRegularExpression.escapedPattern(for: secret) + "(?![\\p{L}\\p{N}])")
        }
    }

    /// Each secret as written and as a query carries it, longest first.
    private static func forms(of secrets: some Sequence<String>) -> [String] {
        var all = Set<String>()
        for secret in secrets {
            all.insert(secret)
            all.insert(HTTPLinks.queryEncoded(secret))
            all.insert(HTTPLinks.formEncoded(secret))
        }
        return all.sorted { $0.count > $1.count }
    }

    /// Hides `secret` too, from now on (values shorter than 3 characters are not hidden).
    func learn(_ secret: String) {
        guard secret.count >= 3 else { return }
        learnt.withLock { secrets in
            guard !secrets.contains(secret) else { return }
            secrets = Self.forms(of: Set(secrets + [secret]))
        }
    }

    /// `text` with every secret and every URL or connection-string password replaced by `***`.
    public func callAsFunction(_ text: String) -> String {
        var result = text
        for secret in learnt.withLock({ $0 }) + secrets where result.contains(secret) {
            result = result.replacingOccurrences(of: secret, with: "***")
        }
        for pattern in shortSecrets {
            result = pattern.stringByReplacingMatches(in: result, range: NSRange(result.startIndex..., in: result), withTemplate: "***")
        }
        return Self.hidingPasswords(result)
    }

    /// `scheme://user:password@` → `scheme://user:***@`; `password=value` (a URL's query or
    /// libpq's keywords) → `password=***`.
    static func hidingPasswords(_ text: String) -> String {
        guard text.contains("://") || text.range(of: "password", options: .caseInsensitive) != nil else { return text }
        var result = text
        for (pattern, template) in passwordPatterns {
            result = pattern.stringByReplacingMatches(in: result, range: NSRange(result.startIndex..., in: result), withTemplate: template)
        }
        return result
    }

    /// Constant patterns: `try!` fails only if one is mistyped, a programmer error every test run would show.
    private static let passwordPatterns: [(NSRegularExpression, String)] = [
        // The userinfo's password: up to the last `@` before the host (a password may hold `@` unescaped).
        (try! NSRegularExpression(pattern: #"([A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]*):[^\s/]*@(?=[^@\s/]*(?:[/?\s]|$))"#), "$1:***@"),
        (try! NSRegularExpression(pattern: #"((?:^|[?&\s])password\s*=\s*)('[^']*'|[^&\s]*)"#, options: .caseInsensitive), "$1***"),
    ]
}
