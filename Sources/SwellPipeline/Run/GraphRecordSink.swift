import SwellCSV
import SwellCalendar
import SwellJSON
import SwellContexts

/// Records with nested objects of the shapes `GraphShape` admits, read by
/// `JSONProjectionReader` on the fetch thread straight into a `GraphBatch`: the record's
/// own fields into its columns, a to-one's fields at their paths below it, a to-many's
/// array taken as its JSON text and read by a second projection, element by element. No
/// `JSONValue`. Every `batchSize` records the batch goes to the `GraphWriter`.
///
/// A record the projections do not take as they are (a value to convert by the Values
/// table, a missing required value, an element that is not an object, …) is read again
/// from its text and mapped by `RecordMapper` and `ElementMapper`, which convert it or
/// say why it is bad, exactly as without projections.
///
/// Used on the fetch thread only (it owns that thread's date formatters).
struct GraphRecordSink: JSONProjectionSink {
    /// How a nested mapping's fields are read (a class: read per field, not copied).
    private final class PlanFields {
        let toMany: Bool
        /// The record's field of the mapping's path: the array's JSON text (to-many), or a probe
        /// of what is there (to-one: `.boolean`, so an object is a cheap mismatch).
        let field: Int
        /// To-one: the first of the element's fields in the record's projection (one per attribute).
        let firstAttribute: Int
        /// To-many: the projection of an element's attributes (one field per attribute).
        let elements: JSONProjection?
        let conversions: [RecordMapper.Projected.Conversion]
        /// Per attribute: `fields` names it (absent is null), else it is mapped only when present.
        let named: [Bool]
        /// Per attribute: nil is not taken as it is (a key or required attribute).
        let needsValue: [Bool]
        let entity: EntityDescription
        let keyIndices: [Int]
        /// The element's attribute rules: a value breaking one is left to `ElementMapper`.
        let rules: AttributeRules
        /// An element with no attribute set yet.
        let empty: MappedNode

        init(toMany: Bool, field: Int, firstAttribute: Int, elements: JSONProjection?, conversions: [RecordMapper.Projected.Conversion],
             named: [Bool], needsValue: [Bool], entity: EntityDescription, keyIndices: [Int]) {
            self.toMany = toMany
            self.field = field
            self.firstAttribute = firstAttribute
            self.elements = elements
            self.conversions = conversions
            self.named = named
            self.needsValue = needsValue
            self.entity = entity
            self.keyIndices = keyIndices
            rules = AttributeRules(entity)
            empty = MappedNode(values: Array(repeating: .null, count: entity.attributes.count), key: [], mapped: [], links: [])
        }
    }

    private let shape: GraphShape
    private let recordMapping: RecordMapper.Projected
    private let plans: [PlanFields]
    private let mapper: RecordMapper
    private let rejecter: RecordRejecter
    private let batchSize: Int
    private let output: BatchQueue<PositionedBatch<GraphBatch>>
    /// Which pages the batches hold whole (the source's position).
    private var pages: BatchPages
    private let patterns = DatePatterns()
    /// The record's projection: its own fields, then each mapping's.
    let projection: JSONProjection

    private var batch: GraphBatch
    private var needsMapper = false
    /// The record's nested objects so far, per mapping (nil: absent or null); changed in place.
    private var links: [[MappedNode]?]
    /// Per record field: the mapping it belongs to (-1: the record's own).
    private let planOfField: [Int]
    private var page = ""
    private var window = RecordWindow()
    /// Reads records again from their bytes, its stacks kept from one record to the next.
    private var parser = JSONValue.Parser()

    /// Since the last hand-off: records read, rejected, the largest cursor value, keys seen (replace).
    private var tally: SinkTally

    init(shape: GraphShape, mapper: RecordMapper, rejecter: RecordRejecter, batchSize: Int, output: BatchQueue<PositionedBatch<GraphBatch>>,
         state: SourceRunState, progress: SourceProgress, sweeper: ReplaceSweeper?, cursor: IncrementalCursor?, positions: PositionBook) {
        self.shape = shape
        recordMapping = mapper.projected
        var fields = recordMapping.projection.fields
        var plans: [PlanFields] = []
        for plan in shape.plans {
            let element = plan.mapper
            var conversions: [RecordMapper.Projected.Conversion] = []
            var kinds: [JSONProjection.Kind] = []
            for index in 0..<element.attributeCount {
                let (conversion, kind) = RecordMapper.Projected.conversion(of: element.entity.attributes[index].type, dates: element.dates[index])
                conversions.append(conversion)
                kinds.append(kind)
            }
            let needsValue = (0..<element.attributeCount).map { !element.entity.attributes[$0].isOptional || element.keyIndices.contains($0) }
            let path = plan.mapping.path
            let field = fields.count
            if plan.relationship.isToMany {
                fields.append(JSONProjection.Field(path, as: .json))
                let elementFields = (0..<element.attributeCount).map { index in
                    JSONProjection.Field(element.paths[index] == ["."] ? [] : element.paths[index], as: kinds[index])
                }
                plans.append(PlanFields(toMany: true, field: field, firstAttribute: -1, elements: JSONProjection(fields: elementFields),
                                        conversions: conversions, named: element.named, needsValue: needsValue, entity: element.entity,
                                        keyIndices: element.keyIndices))
            } else {
                fields.append(JSONProjection.Field(path, as: .boolean))
                for index in 0..<element.attributeCount {
                    fields.append(JSONProjection.Field(element.paths[index] == ["."] ? path : path + element.paths[index], as: kinds[index]))
                }
                plans.append(PlanFields(toMany: false, field: field, firstAttribute: field + 1, elements: nil, conversions: conversions,
                                        named: element.named, needsValue: needsValue, entity: element.entity, keyIndices: element.keyIndices))
            }
        }
        projection = JSONProjection(fields: fields)
        var planOfField = [Int](repeating: -1, count: fields.count)
        for (number, plan) in plans.enumerated() {
            for field in plan.field..<(number + 1 < plans.count ? plans[number + 1].field : fields.count) { planOfField[field] = number }
        }
        self.planOfField = planOfField
        self.plans = plans
        self.mapper = mapper
        self.rejecter = rejecter
        self.batchSize = batchSize
        self.output = output
        tally = SinkTally(state: state, progress: progress, sweeper: sweeper, cursor: cursor, keyIndices: mapper.keyIndices)
        batch = GraphBatch(recordEntity: mapper.entity, shape: shape, expectedRows: batchSize)
        links = Array(repeating: nil, count: shape.plans.count)
        pages = BatchPages(defersCuts: positions.keepsPositions)
    }

    /// Starts (again) on the page at `url`.
    mutating func begin(page url: String) {
        page = url
        window.begin()
        abandonRecord()
    }

    mutating func reading(_ bytes: UnsafeRawBufferPointer) {
        window.reading(bytes)
    }

    mutating func doneReading(keepingFrom offset: Int) {
        window.doneReading(keepingFrom: offset)
    }

    private mutating func abandonRecord() {
        batch.abandonRecord()
        for index in links.indices { links[index] = nil }
        needsMapper = false
    }

    mutating func field(_ field: Int, value: JSONFieldValue) throws {
        if pages.cutPending { handOff() }
        guard !needsMapper else { return }
        if field < recordMapping.conversions.count {
            switch recordMapping.conversions[field].convert(value, patterns: patterns) {
            case .missing, .null:
                if recordMapping.needsValue[field] { needsMapper = true } else { batch.appendRecordValue(.null, at: field) }
            case .value(let converted):
                if recordMapping.rules.hasRules(field), !recordMapping.rules.keeps(attribute: field, converted.storeValue) {
                    needsMapper = true
                } else {
                    batch.appendRecordValue(converted, at: field)
                }
            case .unconverted:
                needsMapper = true
            }
            return
        }
        let number = planOfField[field]
        let plan = plans[number]
        if field == plan.field {
            switch value {
            case .missing, .null:
                links[number] = nil
            case .json(let bytes) where plan.toMany:
                readElements(bytes, plan: plan, into: number)
            case .mismatch where !plan.toMany:
                // Something other than a boolean: an object (or a value the element mapper refuses).
                links[number] = [plan.empty]
            default:
                needsMapper = true
            }
            return
        }
        // A to-one's attribute (its probe came first), set in place.
        guard links[number] != nil else { return }
        if !ElementValues.set(&links[number]![0], attribute: field - plan.firstAttribute, value, plan: plan, patterns: patterns) {
            needsMapper = true
        }
    }

    /// Reads a to-many's array (its compact JSON text) element by element.
    private mutating func readElements(_ bytes: UnsafeRawBufferPointer, plan: PlanFields, into number: Int) {
        if bytes.count == 2, bytes[0] == UInt8(ascii: "["), bytes[1] == UInt8(ascii: "]") {
            links[number] = []
            return
        }
        var sink = ElementSink(plan: plan, patterns: patterns)
        var reader = JSONProjectionReader(projection: plan.elements!, format: .json, recordsPath: nil)
        do {
            try reader.feed(bytes, into: &sink)
            _ = try reader.finish(into: &sink)
        } catch {
            needsMapper = true
            return
        }
        if sink.refused { needsMapper = true } else { links[number] = sink.nodes }
    }

    /// An array's elements, each into a node.
    private struct ElementSink: JSONProjectionSink {
        let plan: PlanFields
        let patterns: DatePatterns
        var nodes: [MappedNode] = []
        var node: MappedNode?
        var refused = false

        init(plan: PlanFields, patterns: DatePatterns) {
            self.plan = plan
            self.patterns = patterns
        }

        mutating func field(_ field: Int, value: JSONFieldValue) throws {
            guard !refused else { return }
            if node == nil { node = plan.empty }
            if !ElementValues.set(&node!, attribute: field, value, plan: plan, patterns: patterns) { refused = true }
        }

        mutating func notAnObject(_ found: JSONFieldMismatch) throws {
            refused = true
        }

        mutating func recordEnd(index: Int, start: JSONPosition, end: Int) throws {
            guard !refused else { return }
            var current = node ?? plan.empty
            current.key = plan.keyIndices.map { current.values[$0] }
            nodes.append(current)
            node = nil
        }
    }

    /// Sets a nested object's attributes from projected values as `ElementMapper` would.
    private enum ElementValues {
        /// Sets attribute `attribute` of `node`; false when the value is not taken as it is.
        static func set(_ node: inout MappedNode, attribute: Int, _ value: JSONFieldValue, plan: PlanFields, patterns: DatePatterns) -> Bool {
            switch plan.conversions[attribute].convert(value, patterns: patterns) {
            case .missing where !plan.named[attribute]:
                return true
            case .missing, .null:
                guard !plan.needsValue[attribute] else { return false }
                node.values[attribute] = .null
            case .value(let converted):
                let value = converted.storeValue
                guard plan.rules.keeps(attribute: attribute, value) else { return false }
                node.values[attribute] = value
            case .unconverted:
                return false
            }
            node.mapped.append(attribute)
            return true
        }
    }

    mutating func notAnObject(_ found: JSONFieldMismatch) throws {
        if pages.cutPending { handOff() }
        needsMapper = true
    }

    mutating func recordEnd(index: Int, start: JSONPosition, end: Int) throws {
        if pages.cutPending { handOff() }
        tally.read()
        if !needsMapper {
            // A to-one object needs its key (else the element mapper says why it is bad).
            for (number, plan) in plans.enumerated() where !plan.toMany && links[number] != nil {
                links[number]![0].key = plan.keyIndices.map { links[number]![0].values[$0] }
                if !plan.keyIndices.allSatisfy(links[number]![0].mapped.contains) { needsMapper = true }
            }
        }
        if needsMapper {
            abandonRecord()
            try mapRecord(index: index, start: start.byteOffset, end: end)
        } else {
            let row = batch.count
            batch.endRecord(links: links, shape: shape)
            for index in links.indices { links[index] = nil }
            tally.took { batch.recordValue(row: row, attribute: $0) }
        }
        if batch.count >= batchSize, pages.batchFull() { handOff() }
    }

    /// Page `number` completed: a full batch waiting for it goes now, holding that page whole.
    mutating func pageCompleted(_ number: Int) {
        if pages.pageCompleted(number) { handOff() }
    }

    /// Reads record `index` (the page's bytes `start..<end`) again from its text and maps it
    /// as `RecordMapper` and the nested plans do.
    private mutating func mapRecord(index: Int, start: Int, end: Int) throws {
        let record = try window.record(index: index, start: start, end: end, page: page, source: rejecter.source.name, parser: &parser)
        let key = mapper.mapKey(record, using: patterns)
        let bad: BadRecord
        switch mapper.map(record, key: key, using: patterns) {
        case .success(let values):
            switch NestedPlan.mapLinks(of: record, plans: shape.plans, place: "", patterns: patterns) {
            case .success(let links):
                batch.append(values, links: links, shape: shape)
                tally.took { values[$0] }
                return
            case .failure(let failure):
                bad = failure
            }
        case .failure(let failure):
            bad = failure
        }
        if let failure = try rejecter.reject(page: page, index: index, record: record, message: bad.message, attribute: bad.attribute) {
            throw failure
        }
        tally.rejectedOne()
    }

    /// Counts the records read since the last hand-off and sends the batch to the writer. Out
    /// of line, as `ColumnRecordSink.handOff`: the per-value check for a pending cut stays small.
    @inline(never)
    mutating func handOff() {
        pages.cut()
        tally.handOff()
        if batch.count > 0 {
            output.put(PositionedBatch(batch: batch, wholePages: pages.mark))
            batch = GraphBatch(recordEntity: mapper.entity, shape: shape, expectedRows: batchSize)
        }
    }
}

@available(*, unavailable)
extension GraphRecordSink: Sendable {}
