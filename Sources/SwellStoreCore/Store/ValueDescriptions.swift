/// How values appear in error messages: one rule for every store and the pipeline.

/// A short text for a value in an error message: `nil`, a number, or a quoted string.
package func describe(_ value: StoreValue) -> String {
    switch value {
    case .null: "nil"
    case .integer(let int): String(int)
    case .real(let double): String(double)
    case .text(let string): "\"\(string)\""
    }
}

extension EntityDescription {
    /// The entity's key in `values` (a row by attribute index), as a conflict error names it.
    package func keyDescription(of values: [StoreValue]) -> [String: String] {
        var text: [String: String] = [:]
        for (offset, name) in uniquenessConstraint.enumerated() {
            text[name] = describe(values[keyIndices[offset]])
        }
        return text
    }
}

extension StoreValue {
    /// A short text for the value in a message, as the stores' errors show values: `nil`, a
    /// number, or a quoted string.
    public var messageText: String { describe(self) }
}
