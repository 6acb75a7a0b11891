import Foundation
import SwellContexts
import SwellStoreCore

/// A Swift type an `@Entity` attribute can have: `String`, `Int`, `Double`, `Bool`, `Date`,
/// ``JSONText``, and optionals of them.
public protocol EntityAttributeValue {
    /// The value, from what `ManagedObject.value(forKey:)` gives; nil when it is not of this type.
    init?(managedValue: Any?)
    /// The value as `ManagedObject.setValue(_:forKey:)` takes it.
    var managedValue: Any? { get }
    /// What a non-optional attribute reads before it has a value (an object made by
    /// `init(context:)` whose attribute was never set): zero, empty, false, the 1970 epoch.
    static var unsetValue: Self { get }
}

extension String: EntityAttributeValue {
    public init?(managedValue: Any?) {
        guard let value = managedValue as? String else { return nil }
        self = value
    }
    public var managedValue: Any? { self }
    public static var unsetValue: String { "" }
}

extension Int: EntityAttributeValue {
    public init?(managedValue: Any?) {
        guard let value = managedValue as? Int else { return nil }
        self = value
    }
    public var managedValue: Any? { self }
    public static var unsetValue: Int { 0 }
}

extension Double: EntityAttributeValue {
    public init?(managedValue: Any?) {
        guard let value = managedValue as? Double else { return nil }
        self = value
    }
    public var managedValue: Any? { self }
    public static var unsetValue: Double { 0 }
}

extension Bool: EntityAttributeValue {
    public init?(managedValue: Any?) {
        guard let value = managedValue as? Bool else { return nil }
        self = value
    }
    public var managedValue: Any? { self }
    public static var unsetValue: Bool { false }
}

extension Date: EntityAttributeValue {
    public init?(managedValue: Any?) {
        guard let value = managedValue as? Date else { return nil }
        self = value
    }
    public var managedValue: Any? { self }
    public static var unsetValue: Date { Date(timeIntervalSince1970: 0) }
}

/// JSON kept as its compact text: the Swift type of a `.json` attribute in an `@Entity` class.
public struct JSONText: EntityAttributeValue, Hashable, Sendable, CustomStringConvertible {
    /// The JSON text.
    public var text: String

    /// Wraps JSON text (the store keeps it as given).
    public init(_ text: String) { self.text = text }

    public init?(managedValue: Any?) {
        guard let value = managedValue as? String else { return nil }
        text = value
    }
    public var managedValue: Any? { text }
    public static var unsetValue: JSONText { JSONText("null") }
    public var description: String { text }
}

extension Optional: EntityAttributeValue where Wrapped: EntityAttributeValue {
    public init?(managedValue: Any?) {
        guard let managedValue else {
            self = .none
            return
        }
        guard let wrapped = Wrapped(managedValue: managedValue) else { return nil }
        self = .some(wrapped)
    }
    public var managedValue: Any? {
        switch self {
        case .none: nil
        case .some(let wrapped): wrapped.managedValue
        }
    }
    public static var unsetValue: Wrapped? { nil }
}
