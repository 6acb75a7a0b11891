/// A JSON object: its members in input order, duplicates kept.
public struct JSONObject: Sendable, Equatable {
    /// The members in input order; a key that occurs twice is kept twice.
    public var members: [(key: String, value: JSONValue)]

    /// Creates an object from members in the order they should be written.
    public init(members: [(key: String, value: JSONValue)] = []) {
        self.members = members
    }

    /// The value for a key; with duplicate keys, the last one wins. Nil when the key is absent.
    public subscript(key: String) -> JSONValue? {
        var index = members.endIndex
        while index > members.startIndex {
            index -= 1
            if members[index].key == key {
                return members[index].value
            }
        }
        return nil
    }

    /// Two objects are equal when they have the same members in the same order.
    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        guard lhs.members.count == rhs.members.count else { return false }
        for (left, right) in zip(lhs.members, rhs.members) where left.key != right.key || left.value != right.value {
            return false
        }
        return true
    }
}
