/// A lightweight migration from the model a store recorded to the model it is opened with
/// (Store guarantees 24 and 57; DocC "Migrating a store"): for each entity of the new model,
/// the table it continues and where each of its columns comes from.
///
/// The plan is made once, here, from the two models alone; each store carries it out in its
/// own SQL (or on its rows) inside the open's transaction, and checks only what depends on the
/// data: a required attribute with no default over rows that hold nil, a new required attribute
/// or a changed key on a table that has rows (the errors are made here too, so every store
/// words them alike). What the plan cannot infer throws `.migrationFailed` before a store
/// changes anything.
///
/// Both models are storage models (`ManagedObjectModel.storageModel`): a to-one is a column,
/// a to-many kept in a join table a join attribute, and a relationship's `renamingIdentifier`
/// is its column's.
package struct ModelMigration: Sendable {
    /// One step per entity of the new model, in its order.
    package var entities: [EntityStep]
    /// Recorded entities that no new entity continues: their tables (and descriptions) stay.
    package var removedEntities: [EntityDescription]

    /// What happens to one entity's table.
    package struct EntityStep: Sendable {
        /// The entity as the new model describes it.
        package var entity: EntityDescription
        /// The recorded entity its table continues (nil: a new table).
        package var previous: EntityDescription?
        /// One step per column of `entity` (its first `columnCount` attributes), in order.
        package var columns: [ColumnStep] = []
        /// Columns of `previous` that no column continues: dropped.
        package var droppedColumns: [String] = []
        /// One step per join table `entity` owns (its join attributes), in order.
        package var joinTables: [JoinTableStep] = []
        /// Join tables of `previous` that no join table continues: dropped.
        package var droppedJoinTables: [String] = []
        /// Whether the key (by the new names) differs from the recorded one.
        package var keyChanged = false

        /// Whether the table had another name.
        package var isRenamed: Bool { previous.map { $0.name != entity.name } ?? false }

        /// The column renames to run in order: each renamed column once, or — when a new name
        /// is one another column still has (a swap) — every renamed column through a scratch
        /// name (`swell_rename_<n>`) first.
        package var columnRenames: [(from: String, to: String)] {
            let renames = columns.compactMap { column in column.isRenamed ? (from: column.previousName!, to: column.attribute.name) : nil }
            let sources = Set(renames.map(\.from))
            guard renames.contains(where: { sources.contains($0.to) }) else { return renames }
            let scratch = renames.indices.map { "swell_rename_\($0)" }
            return zip(renames, scratch).map { (from: $0.from, to: $1) } + zip(renames, scratch).map { (from: $1, to: $0.to) }
        }
    }

    /// Where one column's values come from.
    package struct ColumnStep: Sendable {
        /// The column's attribute in the new model.
        package var attribute: AttributeDescription
        /// The recorded column it continues (nil: a new column).
        package var previousName: String?
        /// The widening its values go through (nil: same type).
        package var widening: Widening?
        /// The value rows get where they hold nil: every row of a new column with a default, the
        /// rows of an attribute made required with a default.
        package var fill: StoreValue?
        /// No row may hold nil: an attribute made required with no default (the store counts the
        /// rows that do), or a new required attribute with no default (the table must be empty).
        package var mustHaveValues = false

        /// Whether the column had another name.
        package var isRenamed: Bool { previousName.map { $0 != attribute.name } ?? false }
        /// Whether the column is new.
        package var isAdded: Bool { previousName == nil }
    }

    /// A join table the entity owns, and the recorded one it continues.
    package struct JoinTableStep: Sendable {
        package var join: JoinTable
        /// Nil: a new join table.
        package var previous: JoinTable?
        /// Whether `previous` was owned by the other side (a rename changed which name sorts
        /// first): its owner column holds this table's members and its member column the owners.
        package var isFlipped = false
    }

    /// Plans the migration from `recorded` to `model` (both storage models).
    package init(from recorded: ManagedObjectModel, to model: ManagedObjectModel) throws(StoreError) {
        let sources = try Self.match(model.entities.map { ($0.name, $0.renamingIdentifier) }, in: recorded.entities.map(\.name)) { name, old in
            .migrationFailed(entity: name, attribute: nil, reason: "its renamingIdentifier '\(old)' names an entity another entity already continues")
        }
        var renamed: [String: String] = [:]
        for (entity, source) in zip(model.entities, sources) {
            if let source { renamed[recorded.entities[source].name] = entity.name }
        }
        var steps: [EntityStep] = []
        for (entity, source) in zip(model.entities, sources) {
            guard let source else {
                steps.append(EntityStep(entity: entity, previous: nil))
                continue
            }
            steps.append(try Self.step(entity, from: recorded.entities[source], renamed: renamed))
        }
        entities = steps
        removedEntities = recorded.entities.filter { renamed[$0.name] == nil }
        resolveFlippedJoinTables(recorded: recorded, renamed: renamed)
    }

    /// The step for an entity that continues `previous`; `renamed`: recorded entity names → new ones.
    private static func step(_ entity: EntityDescription, from previous: EntityDescription,
                             renamed: [String: String]) throws(StoreError) -> EntityStep {
        var step = EntityStep(entity: entity, previous: previous)
        let oldColumns = Array(previous.attributes.prefix(previous.columnCount))
        let newColumns = Array(entity.attributes.prefix(entity.columnCount))
        let oldJoins = Array(previous.attributes.dropFirst(previous.columnCount).filter { $0.join != nil })
        let newJoins = Array(entity.attributes.dropFirst(entity.columnCount).filter { $0.join != nil })
        let sources = try attributeSources(newColumns, in: oldColumns, entity: entity.name)
        var renamedColumns: [String: String] = [:]
        for (attribute, source) in zip(newColumns, sources) {
            guard let source else {
                // A to-one that was a to-many kept in a join table (or the other way): its links cannot be carried.
                if attribute.destination != nil, let old = oldJoins.first(where: { [attribute.name, attribute.renamingIdentifier].contains($0.name) }) {
                    throw .migrationFailed(entity: entity.name, attribute: attribute.name,
                                           reason: "it was a to-many relationship (\(old.name)) and is now a to-one; such a change needs a custom migration stage")
                }
                step.columns.append(ColumnStep(attribute: attribute, previousName: nil, fill: attribute.defaultValue,
                                               mustHaveValues: !attribute.isOptional && attribute.defaultValue == nil))
                continue
            }
            let old = oldColumns[source]
            renamedColumns[old.name] = attribute.name
            if (old.destination == nil) != (attribute.destination == nil) {
                throw .migrationFailed(entity: entity.name, attribute: attribute.name,
                                       reason: "it was \(old.destination == nil ? "an attribute" : "a to-one relationship") and is now \(attribute.destination == nil ? "an attribute" : "a to-one relationship")")
            }
            if let was = old.destination, let now = attribute.destination, (renamed[was] ?? was) != now {
                throw .migrationFailed(entity: entity.name, attribute: attribute.name,
                                       reason: "its destination changed from \(was) to \(now); the IDs it holds are \(was)'s, so such a change needs a custom migration stage")
            }
            var column = ColumnStep(attribute: attribute, previousName: old.name)
            if old.type != attribute.type {
                guard let widening = Widening(from: old.type, to: attribute.type) else {
                    throw .migrationFailed(entity: entity.name, attribute: attribute.name,
                                           reason: "its type changed from \(old.type.rawValue) to \(attribute.type.rawValue), which is not a widening (\(Widening.rule)); such a change needs a custom migration stage")
                }
                column.widening = widening
            }
            if old.isOptional && !attribute.isOptional {
                if let value = attribute.defaultValue { column.fill = value } else { column.mustHaveValues = true }
            }
            step.columns.append(column)
        }
        let continued = Set(step.columns.compactMap(\.previousName))
        step.droppedColumns = oldColumns.map(\.name).filter { !continued.contains($0) }

        let joinSources = try attributeSources(newJoins, in: oldJoins, entity: entity.name)
        for (attribute, source) in zip(newJoins, joinSources) {
            guard let join = attribute.join else { continue }
            if source == nil, let old = oldColumns.first(where: { $0.destination != nil && [attribute.name, attribute.renamingIdentifier].contains($0.name) }) {
                throw .migrationFailed(entity: entity.name, attribute: attribute.name,
                                       reason: "it was a to-one relationship (\(old.name)) and is now a to-many; such a change needs a custom migration stage")
            }
            step.joinTables.append(JoinTableStep(join: join, previous: source.flatMap { oldJoins[$0].join }))
        }
        step.keyChanged = previous.uniquenessConstraint.map { renamedColumns[$0] ?? "\u{0}\($0)" } != entity.uniquenessConstraint
        return step
    }

    /// A many-to-many whose join table a rename moved to the other side (ownership goes to the
    /// side whose `<Entity>_<relationship>` sorts first): the new owner's join table continues
    /// the recorded one of the other side, its columns swapped. Then each step drops the
    /// recorded join tables nothing continues.
    private mutating func resolveFlippedJoinTables(recorded: ManagedObjectModel, renamed: [String: String]) {
        var claimed = Set(entities.flatMap { $0.joinTables.compactMap { $0.previous?.table } })
        let recordedJoins = recorded.entities.flatMap { $0.attributes.compactMap(\.join) }
        let oldName = Dictionary(renamed.map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        let newEntities = Dictionary(entities.map { ($0.entity.name, $0.entity) }, uniquingKeysWith: { first, _ in first })
        for index in entities.indices {
            for position in entities[index].joinTables.indices where entities[index].joinTables[position].previous == nil {
                let join = entities[index].joinTables[position].join
                guard let inverseName = entities[index].entity.relationship(named: join.relationship)?.inverse,
                      let inverse = newEntities[join.destination]?.relationship(named: inverseName),
                      let destination = oldName[join.destination], let owner = oldName[join.owner] else { continue }
                let names = [inverse.name, inverse.renamingIdentifier].compactMap { $0 }
                guard let old = recordedJoins.first(where: { !claimed.contains($0.table) && $0.owner == destination
                    && $0.destination == owner && names.contains($0.relationship) }) else { continue }
                entities[index].joinTables[position].previous = old
                entities[index].joinTables[position].isFlipped = true
                claimed.insert(old.table)
            }
        }
        for index in entities.indices {
            guard let previous = entities[index].previous else { continue }
            entities[index].droppedJoinTables = previous.attributes.compactMap(\.join?.table).filter { !claimed.contains($0) }
        }
    }

    /// For each of `attributes`, the index in `old` of the attribute it continues.
    private static func attributeSources(_ attributes: [AttributeDescription], in old: [AttributeDescription],
                                         entity: String) throws(StoreError) -> [Int?] {
        try match(attributes.map { ($0.name, $0.renamingIdentifier) }, in: old.map(\.name)) { name, previous in
            .migrationFailed(entity: entity, attribute: name,
                             reason: "its renamingIdentifier '\(previous)' names an attribute another attribute already continues")
        }
    }

    /// For each (name, renamingIdentifier), the index in `old` of the name it continues: the one
    /// its renaming identifier names, when `old` has it (as Core Data matches), else its own
    /// name when no renaming identifier claimed that. A name claimed twice is `failure`.
    private static func match(_ names: [(name: String, renamingIdentifier: String?)], in old: [String],
                              failure: (_ name: String, _ old: String) -> StoreError) throws(StoreError) -> [Int?] {
        var claimed = Set<Int>()
        var sources = [Int?](repeating: nil, count: names.count)
        for (index, item) in names.enumerated() {
            guard let identifier = item.renamingIdentifier, identifier != item.name,
                  let source = old.firstIndex(of: identifier) else { continue }
            guard claimed.insert(source).inserted else { throw failure(item.name, identifier) }
            sources[index] = source
        }
        for (index, item) in names.enumerated() where sources[index] == nil {
            guard let source = old.firstIndex(of: item.name), !claimed.contains(source) else { continue }
            claimed.insert(source)
            sources[index] = source
        }
        return sources
    }
}

extension ModelMigration.EntityStep {
    /// The checks that depend on the data, in one place for every store: no nil left where a
    /// column must have values, no new required column or changed key on a table with rows.
    /// `tableIsEmpty` answers for the (recorded) table, `nils` counts the rows holding nil in a
    /// recorded column; each is asked only when needed, the first at most once.
    package func checkData(tableIsEmpty: () throws -> Bool, nils: (_ column: String) throws -> Int) throws {
        var isEmpty: Bool?
        func empty() throws -> Bool {
            if let isEmpty { return isEmpty }
            let answer = try tableIsEmpty()
            isEmpty = answer
            return answer
        }
        for column in columns where column.mustHaveValues {
            guard let previous = column.previousName else {
                if try !empty() {
                    throw StoreError.migrationFailed(entity: entity.name, attribute: column.attribute.name,
                                                     reason: "a new required attribute cannot be added to a table that already has rows (make it optional, or give it a defaultValue)")
                }
                continue
            }
            let count = try nils(previous)
            if count > 0 {
                throw StoreError.migrationFailed(entity: entity.name, attribute: column.attribute.name,
                                                 reason: "it became required but \(count) stored row(s) have no value for it (give it a defaultValue, or keep it optional)")
            }
        }
        if keyChanged, try !empty() {
            let old = previous?.uniquenessConstraint ?? []
            throw StoreError.migrationFailed(entity: entity.name, attribute: entity.uniquenessConstraint.first ?? old.first,
                                             reason: "its key changed from [\(old.joined(separator: ", "))] to [\(entity.uniquenessConstraint.joined(separator: ", "))] on a table that has rows")
        }
    }
}
