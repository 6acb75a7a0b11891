import Foundation

/// The type of an attribute: what values it holds and how the store keeps them.
///
/// | type | Swift value | SQLite column |
/// | --- | --- | --- |
/// | `.string` | `String` | TEXT |
/// | `.integer` | `Int` | INTEGER |
/// | `.double` | `Double` | REAL |
/// | `.boolean` | `Bool` | INTEGER 0/1 |
/// | `.date` | `Date` | REAL, Unix seconds UTC |
/// | `.json` | `String`, compact JSON text | TEXT |
public enum AttributeType: String, Sendable, Hashable, Codable, CaseIterable {
    case string
    case integer
    case double
    case boolean
    case date
    /// Any JSON value, kept as its compact text (Pipeline file reference, version 2).
    case json
}
