import Foundation

/// A dictionary fetch checked against the model (Store guarantees 44; SwellStore documentation,
/// "Dictionary and aggregate fetches"): each fetched property's source and type, the
/// grouping, and the having predicate bound to the result's properties.
///
/// `results(of:)` computes the rows from the fetched objects' values as the context sees
/// them, unsaved changes included, so they agree with an object fetch by construction.
package struct DictionaryFetchPlan {
    /// Where a property's value comes from in a fetched row.
    package enum Source: Hashable {
        /// An attribute, by index in the store's entity.
        case attribute(Int)
        /// A to-one relationship's column (the destination's primary key): an object ID.
        case objectID(Int, destination: String)
        /// A to-one key path to an attribute of a related object.
        case keyPath([String])
    }

    /// One key of each result dictionary.
    package struct Column {
        package var name: String
        package var source: Source
        /// The source's type (`.integer` for an object ID).
        package var sourceType: AttributeType
        package var aggregate: AggregateFunction?

        /// The type of the column's values.
        package var type: AttributeType {
            switch aggregate {
            case .count?, .countDistinct?: .integer
            case .average?: .double
            case .sum?, .min?, .max?, nil: sourceType
            }
        }
    }

    package let entity: EntityDescription
    package let columns: [Column]
    /// The group-by sources; empty with `isGrouped` means one group of every row.
    package let groupBy: [Source]
    /// Whether rows are grouped (an expression or `propertiesToGroupBy`): one result per group.
    package let isGrouped: Bool
    package let having: BoundPredicate?
    package let distinct: Bool

    /// Checks `request`'s properties against `entity` (the store's copy, relationship columns included).
    package init(_ request: FetchRequest, entity: EntityDescription, entities: [String: EntityDescription],
         attributeIndex: [String: Int]) throws(StoreError) {
        self.entity = entity
        func invalid(_ reason: String) -> StoreError { .invalidFetch(entity: entity.name, reason: reason) }
        func source(_ name: String) throws(StoreError) -> (Source, AttributeType) {
            if let index = attributeIndex[name] {
                let attribute = entity.attributes[index]
                if let destination = attribute.destination { return (.objectID(index, destination: destination), .integer) }
                if attribute.join == nil && attribute.orderOf == nil { return (.attribute(index), attribute.type) }
            }
            let path = name.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            if path.count > 1, let type = Self.toOnePathType(path, from: entity, entities: entities) { return (.keyPath(path), type) }
            throw invalid("'\(name)' is not an attribute, a to-one relationship or a to-one key path of \(entity.name)")
        }
        var columns: [Column] = []
        let properties: [any FetchProperty] = request.propertiesToFetch.isEmpty
            ? entity.attributes.filter { $0.destination == nil && $0.join == nil && $0.orderOf == nil }.map(\.name)
            : request.propertiesToFetch
        for property in properties {
            if let name = property as? String {
                let (source, type) = try source(name)
                columns.append(Column(name: name, source: source, sourceType: type, aggregate: nil))
            } else if let expression = property as? ExpressionDescription {
                let (source, type) = try source(expression.keyPath)
                switch (expression.function, source) {
                case (.sum, _), (.average, _):
                    guard case .attribute = source, type == .integer || type == .double else {
                        if case .keyPath = source, type == .integer || type == .double { break }
                        throw invalid("\(expression.function.rawValue) of '\(expression.keyPath)' needs a number (integer or double), not \(type.rawValue)")
                    }
                case (.min, .objectID), (.max, .objectID):
                    throw invalid("\(expression.function.rawValue) of the relationship '\(expression.keyPath)' has no meaning: use count")
                default: break
                }
                guard !expression.name.isEmpty else { throw invalid("an expression over '\(expression.keyPath)' has no name") }
                columns.append(Column(name: expression.name, source: source, sourceType: type, aggregate: expression.function))
            } else {
                throw invalid("propertiesToFetch takes names (String) and ExpressionDescription values, not \(type(of: property))")
            }
        }
        var seen: Set<String> = []
        for column in columns where !seen.insert(column.name).inserted {
            throw invalid("two fetched properties are named '\(column.name)'")
        }
        var groupBy: [Source] = []
        for name in request.propertiesToGroupBy {
            let (source, _) = try source(name)
            groupBy.append(source)
        }
        let isGrouped = !groupBy.isEmpty || columns.contains { $0.aggregate != nil }
        if isGrouped {
            for column in columns where column.aggregate == nil && !request.propertiesToGroupBy.contains(column.name) {
                throw invalid("'\(column.name)' is fetched beside expressions or a grouping but is not in propertiesToGroupBy")
            }
        }
        var having: BoundPredicate?
        if let format = request.havingPredicate {
            guard isGrouped else { throw invalid("a havingPredicate needs propertiesToGroupBy or an expression") }
            // The predicate reads the result's properties by name, as attributes of a row of the result.
            let named = columns.filter { ManagedObjectModel.isValidName($0.name) }
            let result = EntityDescription(name: "\(entity.name)_result",
                                           attributes: named.map { AttributeDescription(name: $0.name, type: $0.type, isOptional: true) })
            do {
                having = try format.bind(to: result)
            } catch {
                throw .invalidPredicate(error)
            }
            columnsForHaving = columns.map { column in named.firstIndex { $0.name == column.name } }
        } else {
            columnsForHaving = []
        }
        self.columns = columns
        self.groupBy = groupBy
        self.isGrouped = isGrouped
        self.having = having
        distinct = request.returnsDistinctResults
    }

    /// Per column, its index among the having predicate's attributes (nil: not readable there).
    fileprivate let columnsForHaving: [Int?]

    /// The type a to-one key path ends in, or nil when it is not one.
    package static func toOnePathType(_ path: [String], from entity: EntityDescription, entities: [String: EntityDescription]) -> AttributeType? {
        var current = entity
        for name in path.dropLast() {
            guard let relationship = current.relationship(named: name), !relationship.isToMany,
                  let next = entities[relationship.destination] else { return nil }
            current = next
        }
        return current.attributes.first { $0.name == path.last && $0.destination == nil && $0.join == nil && $0.orderOf == nil }?.type
    }

    /// Builds the result rows from the fetched rows, one row at a time (memory: the
    /// results, or one entry per group).
    package struct Accumulator {
        package let plan: DictionaryFetchPlan
        /// Ungrouped: the result rows so far.
        private var rows: [[StoreValue]] = []
        private var seen: Set<[StoreValue]> = []
        /// Grouped: the groups by group-by values, in order of their first row, with that
        /// row's values of the non-expression columns.
        private var order: [[StoreValue]] = []
        private var groups: [[StoreValue]: (first: [StoreValue], aggregators: [Aggregator])] = [:]

        package init(_ plan: DictionaryFetchPlan) {
            self.plan = plan
        }

        /// Adds the fetched row whose sources `value` reads.
        package mutating func add(_ value: (Source) -> StoreValue) throws(StoreError) {
            let columns = plan.columns
            guard plan.isGrouped else {
                let row = columns.map { value($0.source) }
                if !plan.distinct || seen.insert(row).inserted { rows.append(row) }
                return
            }
            let key = plan.groupBy.map(value)
            if groups[key] == nil {
                order.append(key)
                groups[key] = (columns.map { $0.aggregate == nil ? value($0.source) : .null }, columns.map { Aggregator($0) })
            }
            for index in columns.indices where columns[index].aggregate != nil {
                try groups[key]!.aggregators[index].add(value(columns[index].source), entity: plan.entity.name, column: columns[index].name)
            }
        }

        /// The result rows: values by column, `.null` where a value is absent.
        package func finish() -> [[StoreValue]] {
            guard plan.isGrouped else { return rows }
            var order = self.order
            var groups = self.groups
            // With expressions and no grouping, the one group exists even over no rows.
            if order.isEmpty && plan.groupBy.isEmpty {
                order = [[]]
                groups[[]] = (plan.columns.map { _ in .null }, plan.columns.map { Aggregator($0) })
            }
            var results: [[StoreValue]] = order.map { key in
                let group = groups[key]!
                return plan.columns.indices.map { plan.columns[$0].aggregate == nil ? group.first[$0] : group.aggregators[$0].result }
            }
            if let having = plan.having {
                results = results.filter { row in
                    var values = [StoreValue](repeating: .null, count: plan.columnsForHaving.compactMap { $0 }.count)
                    for (index, position) in plan.columnsForHaving.enumerated() { if let position { values[position] = row[index] } }
                    return having.evaluate(values)
                }
            }
            if plan.distinct {
                var seen: Set<[StoreValue]> = []
                results = results.filter { seen.insert($0).inserted }
            }
            return results
        }
    }

    /// One expression's running value over a group.
    package struct Aggregator {
        package let function: AggregateFunction?
        package let type: AttributeType
        private var count = 0
        private var integerSum: Int64 = 0
        private var doubleSum: Double = 0
        private var extreme: StoreValue = .null
        private var distinct: Set<StoreValue> = []

        package init(_ column: Column) {
            function = column.aggregate
            type = column.sourceType
        }

        package mutating func add(_ value: StoreValue, entity: String, column: String) throws(StoreError) {
            guard !value.isNull else { return }
            count += 1
            switch function {
            case .sum?, .average?:
                switch value {
                case .integer(let int):
                    let (sum, overflow) = integerSum.addingReportingOverflow(int)
                    if overflow && function == .sum && type == .integer {
                        throw .invalidFetch(entity: entity, reason: "the sum \(column) overflows a 64-bit integer")
                    }
                    integerSum = overflow ? integerSum : sum
                    doubleSum += Double(int)
                case .real(let double): doubleSum += double
                default: break
                }
            case .min?:
                if extreme.isNull || StoreValue.compare(value, extreme) < 0 { extreme = value }
            case .max?:
                if extreme.isNull || StoreValue.compare(value, extreme) > 0 { extreme = value }
            case .countDistinct?:
                distinct.insert(value)
            case .count?, nil:
                break
            }
        }

        package var result: StoreValue {
            switch function {
            case .count?: .integer(Int64(count))
            case .countDistinct?: .integer(Int64(distinct.count))
            case .sum?: type == .integer ? .integer(integerSum) : .real(doubleSum)
            case .average?: count == 0 ? .null : .real(doubleSum / Double(count))
            case .min?, .max?: extreme
            case nil: .null
            }
        }
    }
}
