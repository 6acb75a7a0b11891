import SwellHTTP

/// Text from a page (a next link's URL, a cursor) as a position may keep it: each value of
/// the file's environment variables in it — as written, or percent- or form-encoded as a
/// query carries it — replaced by a reference to its variable (`${VAR}`, `${VAR:query}`,
/// `${VAR:form}`), and `$` written `$$`; a resumed run fills the references back from its own
/// environment. A server that echoes an API key into its next links thus never puts the key
/// in the store.
///
/// A text that still holds a secret once the variables are replaced — a token learnt during
/// the run (OAuth 2.0), a secret written in the file itself, a URL's password — cannot be kept
/// (`template` gives nil): the position then keeps no request for that page.
struct SecretTemplate: Sendable {
    /// The forms of each variable's value, longest first: the text and the reference it becomes.
    private let forms: [(value: String, reference: String)]
    /// Variable name → value, to fill references back.
    private let values: [String: String]
    private let redactor: Redactor

    /// `variables`: the file's environment variables that became secrets, name → value.
    init(variables: [String: String], redactor: Redactor) {
        values = variables
        self.redactor = redactor
        var forms: [(value: String, reference: String)] = []
        for (name, value) in variables.sorted(by: { $0.key < $1.key }) where value.count >= 3 {
            forms.append((value, "${\(name)}"))
            let query = HTTPLinks.queryEncoded(value), form = HTTPLinks.formEncoded(value)
            if query != value { forms.append((query, "${\(name):query}")) }
            if form != value && form != query { forms.append((form, "${\(name):form}")) }
        }
        self.forms = forms.sorted { $0.value.count > $1.value.count }
    }

    /// `text` with its secrets replaced by references; nil when a secret would remain.
    func template(_ text: String) -> String? {
        var result = ""
        var rest = Substring(text)
        scan: while let first = rest.first {
            for form in forms where rest.hasPrefix(form.value) {
                result += form.reference
                rest = rest.dropFirst(form.value.count)
                continue scan
            }
            result += first == "$" ? "$$" : String(first)
            rest = rest.dropFirst()
        }
        // What the redactor still hides (with the references in place) cannot be kept.
        return redactor(result) == result ? result : nil
    }

    /// The text `template` made, its references filled from this run's variables; nil when
    /// one names a variable this run does not have, or the text is not a template.
    func fill(_ template: String) -> String? {
        var result = ""
        var rest = Substring(template)
        while let dollar = rest.firstIndex(of: "$") {
            result += rest[..<dollar]
            let after = rest[rest.index(after: dollar)...]
            if after.first == "$" {
                result += "$"
                rest = after.dropFirst()
                continue
            }
            guard after.first == "{", let close = after.firstIndex(of: "}") else { return nil }
            let reference = after[after.index(after: after.startIndex)..<close]
            let parts = reference.split(separator: ":", maxSplits: 1).map(String.init)
            guard let name = parts.first, let value = values[name] else { return nil }
            switch parts.count == 2 ? parts[1] : "" {
            case "": result += value
            case "query": result += HTTPLinks.queryEncoded(value)
            case "form": result += HTTPLinks.formEncoded(value)
            default: return nil
            }
            rest = after[after.index(after: close)...]
        }
        return result + rest
    }
}
