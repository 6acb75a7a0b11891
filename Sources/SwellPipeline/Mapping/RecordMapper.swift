import SwellCSV
import SwellJSON
import SwellStore

/// Maps one source's records onto its entity: each attribute's value found by
/// its field path and converted by type. A bad record gives the attribute and why.
struct RecordMapper: Sendable {
    let entity: EntityDescription
    let fields: [(path: [String], dates: DateFormat)]
    let keyIndices: [Int]
    /// Each field path's first key, and the rest of it (nested fields), split once.
    private let fieldHeads: [String]
    private let fieldTails: [[String]]

    init(source: SourceSpec, entity: PipelineEntity) {
        self.entity = entity.description
        self.fields = entity.attributes.map { attribute in
            let field = source.fields[attribute.name] ?? FieldSpec(path: [attribute.name], dateFormat: nil)
            return (field.path, field.dateFormat ?? source.dates)
        }
        self.keyIndices = self.entity.keyIndices
        self.fieldHeads = fields.map { $0.path.first ?? "" }
        self.fieldTails = fields.map { Array($0.path.dropFirst()) }
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

    /// The record's values by attribute index, or why it is bad; date patterns are read with `patterns`.
    func map(_ record: JSONValue, using patterns: DatePatterns) -> Result<[StoreValue], BadRecord> {
        guard case .object(let object) = record else {
            return .failure(BadRecord(attribute: nil, message: "a record must be a JSON object, got \(record.kindDescription)"))
        }
        let rawValues = fieldValues(object)
        var values: [StoreValue] = []
        values.reserveCapacity(fields.count)
        for (index, attribute) in entity.attributes.enumerated() {
            let field = fields[index]
            let raw = rawValues[index]
            switch ValueConverter.convert(raw, to: attribute.type, dates: field.dates, patterns: patterns) {
            case .success(let value):
                if value.isNull && !attribute.isOptional {
                    let what = keyIndices.contains(index) ? "the key attribute" : "a required value"
                    return .failure(BadRecord(attribute: attribute.name, message: "\(attribute.name): \(what) is missing (\(field.path.joined(separator: ".")))"))
                }
                values.append(value)
            case .failure(let failure):
                return .failure(BadRecord(attribute: attribute.name, message: "\(attribute.name): \(failure.message)"))
            }
        }
        if keyIndices.contains(where: { values[$0].isNull }) {
            return .failure(BadRecord(attribute: entity.uniquenessConstraint.first, message: "the record has no key (\(entity.uniquenessConstraint.joined(separator: ", ")))"))
        }
        return .success(values)
    }

    /// Which of `count` workers a record goes to: records with the same key always
    /// go to the same worker, in the order they arrived, so the later one wins.
    func worker(for record: JSONValue, of count: Int, using patterns: DatePatterns) -> Int {
        guard count > 1 else { return 0 }
        var hasher = Hasher()
        for index in keyIndices {
            let raw = record.value(at: fields[index].path) ?? .null
            if case .success(let value) = ValueConverter.convert(raw, to: entity.attributes[index].type, dates: fields[index].dates, patterns: patterns) {
                hasher.combine(value)
            }
        }
        return Int(UInt(bitPattern: hasher.finalize()) % UInt(count))
    }
}

/// A record that cannot be stored: which attribute, and why.
struct BadRecord: Error, Sendable {
    var attribute: String?
    var message: String
}
