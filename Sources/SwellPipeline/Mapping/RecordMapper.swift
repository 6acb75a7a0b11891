import SwellCSV
import SwellCalendar
import SwellJSON
import SwellContexts

/// Maps one source's records onto its entity: each attribute's value found by
/// its field path and converted by type. A bad record gives the attribute and why.
///
/// Each value is converted once: the key by `mapKey` on the fetch thread (it
/// picks the record's worker), the other attributes by `map` on the worker,
/// which takes the key's values on.
struct RecordMapper: Sendable {
    let entity: EntityDescription
    let fields: [(path: [String], dates: DateFormat)]
    let keyIndices: [Int]
    /// Each field path's first key, and the rest of it (nested fields), split once.
    private let fieldHeads: [String]
    private let fieldTails: [[String]]
    /// For each attribute index, its position in `keyIndices` (nil: not a key attribute).
    private let keyPositions: [Int?]
    /// The attributes' rules.
    let rules: AttributeRules

    init(source: SourceSpec, entity: PipelineEntity) {
        self.entity = entity.description
        self.fields = entity.attributes.map { attribute in
            let field = source.fields[attribute.name] ?? FieldSpec(path: [attribute.name], dateFormat: nil)
            return (field.path, field.dateFormat ?? source.dates)
        }
        let keyIndices = self.entity.keyIndices
        self.keyIndices = keyIndices
        self.fieldHeads = fields.map { $0.path.first ?? "" }
        self.fieldTails = fields.map { Array($0.path.dropFirst()) }
        self.keyPositions = self.entity.attributes.indices.map { keyIndices.firstIndex(of: $0) }
        self.rules = AttributeRules(self.entity)
    }

    /// Each attribute's field in `record`, found in one pass over its members
    /// (a key given twice: the last one wins); `.null` where it is absent.
    private func fieldValues(_ record: JSONObject) -> [JSONValue] {
        var raw = [JSONValue](repeating: .null, count: fields.count)
        for member in record.members {
            for index in fieldHeads.indices where fieldHeads[index] == member.key {
                let tail = fieldTails[index]
                raw[index] = tail.isEmpty ? member.value : member.value.value(at: tail) ?? .null
            }
        }
        return raw
    }

    /// Attribute `index`'s value from its raw field, or why the record is bad.
    private func convert(_ raw: JSONValue, attribute index: Int, patterns: DatePatterns) -> Result<StoreValue, BadRecord> {
        let attribute = entity.attributes[index]
        let field = fields[index]
        switch ValueConverter.convert(raw, to: attribute.type, dates: field.dates, patterns: patterns) {
        case .success(let value):
            if value.isNull && !attribute.isOptional {
                let what = keyPositions[index] != nil ? "the key attribute" : "a required value"
                return .failure(BadRecord(attribute: attribute.name, message: "\(attribute.name): \(what) is missing (\(field.path.joined(separator: ".")))"))
            }
            if let breach = rules.breach(attribute: index, value: value, raw: raw) {
                return .failure(BadRecord(attribute: attribute.name, message: "\(attribute.name): \(breach)"))
            }
            return .success(value)
        case .failure(let failure):
            return .failure(BadRecord(attribute: attribute.name, message: "\(attribute.name): \(failure.message)"))
        }
    }

    /// The record's key attributes, converted (on the fetch thread, to route the record).
    func mapKey(_ record: JSONValue, using patterns: DatePatterns) -> MappedKey {
        guard case .object = record else { return MappedKey(values: []) }
        return MappedKey(values: keyIndices.map { index in
            convert(record.value(at: fields[index].path) ?? .null, attribute: index, patterns: patterns)
        })
    }

    /// The record's values by attribute index, or why it is bad (the first bad
    /// attribute in attribute order). `key` is `mapKey`'s answer for this record:
    /// its values are taken as they are.
    func map(_ record: JSONValue, key: MappedKey, using patterns: DatePatterns) -> Result<[StoreValue], BadRecord> {
        guard case .object(let object) = record else {
            return .failure(BadRecord(attribute: nil, message: "a record must be a JSON object, got \(record.kindDescription)"))
        }
        let rawValues = fieldValues(object)
        var values: [StoreValue] = []
        values.reserveCapacity(fields.count)
        for index in entity.attributes.indices {
            let converted = keyPositions[index].map { key.values[$0] } ?? convert(rawValues[index], attribute: index, patterns: patterns)
            switch converted {
            case .success(let value): values.append(value)
            case .failure(let bad): return .failure(bad)
            }
        }
        if keyIndices.contains(where: { values[$0].isNull }) {
            return .failure(BadRecord(attribute: entity.uniquenessConstraint.first, message: "the record has no key (\(entity.uniquenessConstraint.joined(separator: ", ")))"))
        }
        return .success(values)
    }
}

/// A record's key, converted once on the fetch thread: it picks the record's
/// worker, and the worker's `RecordMapper.map` takes its values on.
struct MappedKey: Sendable {
    /// Per key attribute (in `RecordMapper.keyIndices` order): its value, or why the record is bad.
    let values: [Result<StoreValue, BadRecord>]

    /// Which of `count` workers the record goes to: records with equal keys
    /// always go to the same worker, in the order they arrived, so the later one wins.
    func worker(of count: Int) -> Int {
        guard count > 1 else { return 0 }
        var hasher = Hasher()
        for case .success(let value) in values {
            hasher.combine(value)
        }
        return Int(UInt(bitPattern: hasher.finalize()) % UInt(count))
    }
}

/// A record that cannot be stored: which attribute, and why.
struct BadRecord: Error, Sendable {
    var attribute: String?
    var message: String
}
