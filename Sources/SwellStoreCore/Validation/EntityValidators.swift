/// An entity's validation closures for insert, update and delete, kept type-erased here (the
/// object type lives above this module; SwellContexts' `EntityDescription.validateForInsert`
/// and its siblings set and read them).
///
/// Closures have no equality: two entities compare equal whatever validators they carry, so a
/// store's copy of the model (which never keeps them) still matches the model in code.
package struct EntityValidators: Sendable, Hashable {
    package typealias Validator = @Sendable (AnyObject) throws -> Void

    package var insert: Validator?
    package var update: Validator?
    package var delete: Validator?

    package init() {}

    package var isEmpty: Bool { insert == nil && update == nil && delete == nil }

    package static func == (lhs: EntityValidators, rhs: EntityValidators) -> Bool { true }
    package func hash(into hasher: inout Hasher) {}
}
