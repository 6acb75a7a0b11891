import SwellTestSupport
import SwellPipelineTestSupport

/// The records of one run of a `RandomPipeline`, drawn from small pools of keys so
/// that runs edit what earlier runs stored: values change, go null or missing;
/// elements are added, removed, reordered and moved between parents; arrays and
/// to-ones become empty, null or missing; a key comes twice in a run (the later
/// record wins). Some of the previous run's records come back unchanged.
///
/// Within one run a nested object has one set of values wherever it appears, so
/// which of its appearances is written last cannot matter.
struct RandomRecords {
    let pipeline: RandomPipeline
    /// Per entity and key number: the nested object's member values this run (nil: the member is left out).
    private var values: [Int: [Int: [String: JSON?]]] = [:]

    init(pipeline: RandomPipeline) {
        self.pipeline = pipeline
    }

    /// `main`'s records: some of `previous` again (nested values as this run has them), new ones, a repeated key.
    mutating func main(previous: [JSON], using random: inout SeededGenerator) -> [JSON] {
        values = [:]
        var records: [JSON] = []
        for record in previous where Int.random(in: 0..<3, using: &random) == 0 {
            records.append(Bool.random(using: &random) ? record : edited(record, using: &random))
        }
        for _ in 0..<Int.random(in: 1...5, using: &random) {
            records.append(root(using: &random))
        }
        records.shuffle(using: &random)
        if Int.random(in: 0..<3, using: &random) == 0, let repeated = records.randomElement(using: &random), let key = repeated.member("id") {
            // The same key again, later in the run, with other values and links.
            var again = root(using: &random)
            if case .object(var members) = again {
                members[0] = ("id", key)
                again = .object(members)
            }
            records.insert(again, at: Int.random(in: (records.firstIndex(of: repeated)! + 1)...records.count, using: &random))
        }
        return records.map { refreshed($0, entity: 0, plans: pipeline.plans, isRoot: true, using: &random) }
    }

    /// `side`'s records of its entity: every attribute (some null or left out), and its nested mappings.
    mutating func side(using random: inout SeededGenerator) -> [JSON] {
        guard let entity = pipeline.side else { return [] }
        let records = (0..<Int.random(in: 0...4, using: &random)).map { _ in
            var members: [(String, JSON)] = [("id", pipeline.key(entity, Int.random(in: 1...6, using: &random)))]
            for attribute in pipeline.entities[entity].attributes {
                if let value = Self.value(attribute, using: &random) { members.append((attribute.name, value)) }
            }
            return JSON.object(members + links(pipeline.sidePlans, using: &random))
        }
        return records.map { refreshed($0, entity: entity, plans: pipeline.sidePlans, isRoot: true, using: &random) }
    }

    /// A kept record with its arrays reordered, an element dropped, or a link nulled or left out.
    private func edited(_ record: JSON, using random: inout SeededGenerator) -> JSON {
        guard case .object(var members) = record else { return record }
        for index in members.indices {
            guard case .array(var elements) = members[index].1 else { continue }
            switch Int.random(in: 0..<5, using: &random) {
            case 0: elements.reverse()
            case 1: elements.shuffle(using: &random)
            case 2: if !elements.isEmpty { elements.remove(at: Int.random(in: elements.indices, using: &random)) }
            case 3: members[index].1 = Bool.random(using: &random) ? .null : .array([])
                continue
            default: continue
            }
            members[index].1 = .array(elements)
        }
        if Int.random(in: 0..<4, using: &random) == 0, members.count > 1 {
            members.remove(at: Int.random(in: 1..<members.count, using: &random))
        }
        return .object(members)
    }

    /// A new root record: its own values and a random element (or null, or nothing) per nested mapping.
    private func root(using random: inout SeededGenerator) -> JSON {
        var members: [(String, JSON)] = [("id", pipeline.key(0, Int.random(in: 1...5, using: &random)))]
        for attribute in pipeline.entities[0].attributes {
            if let value = Self.value(attribute, using: &random) { members.append((attribute.name, value)) }
        }
        members += links(pipeline.plans, using: &random)
        return .object(members)
    }

    /// Members for `plans`: an object or an array of keys (values are filled in by `refreshed`), null, or left out.
    private func links(_ plans: [RandomPipeline.Plan], using random: inout SeededGenerator) -> [(String, JSON)] {
        var members: [(String, JSON)] = []
        for plan in plans {
            let relationship = plan.relationship
            switch Int.random(in: 0..<10, using: &random) {
            case 0: continue
            case 1: members.append((relationship.name, .null))
            default:
                let element = { (random: inout SeededGenerator) -> JSON in
                    .object([("id", pipeline.key(relationship.destination, Int.random(in: 1...6, using: &random)))] + links(plan.children, using: &random))
                }
                if relationship.toMany {
                    var elements: [JSON] = []
                    for _ in 0..<Int.random(in: 0...3, using: &random) {
                        let next = element(&random)
                        if !elements.contains(where: { $0.member("id") == next.member("id") }) { elements.append(next) }
                    }
                    members.append((relationship.name, .array(elements)))
                } else {
                    members.append((relationship.name, element(&random)))
                }
            }
        }
        return members
    }

    /// The record with every nested object's mapped values as this run has them.
    private mutating func refreshed(_ node: JSON, entity: Int, plans: [RandomPipeline.Plan], mapped: [String] = [], isRoot: Bool,
                                    using random: inout SeededGenerator) -> JSON {
        guard case .object(let members) = node, let key = node.member("id") else { return node }
        var result: [(String, JSON)] = isRoot ? members.filter { member in !plans.contains { $0.relationship.name == member.0 } } : [("id", key)]
        if !isRoot {
            let number = Int(key.described.filter(\.isNumber)) ?? 0
            if values[entity]?[number] == nil {
                var drawn: [String: JSON?] = [:]
                for attribute in pipeline.entities[entity].attributes { drawn[attribute.name] = Self.value(attribute, using: &random) }
                values[entity, default: [:]][number] = drawn
            }
            for name in mapped where name != "id" {
                if let value = values[entity]?[number]?[name] ?? nil { result.append((name, value)) }
            }
        }
        for plan in plans {
            guard let link = node.member(plan.relationship.name) else { continue }
            let destination = plan.relationship.destination
            switch link {
            case .array(let elements):
                result.append((plan.relationship.name, .array(elements.map {
                    refreshed($0, entity: destination, plans: plan.children, mapped: plan.mapped, isRoot: false, using: &random)
                })))
            case .object:
                result.append((plan.relationship.name, refreshed(link, entity: destination, plans: plan.children, mapped: plan.mapped,
                                                                 isRoot: false, using: &random)))
            default:
                result.append((plan.relationship.name, link))
            }
        }
        return .object(result)
    }

    /// An attribute's value: usually one of a few, sometimes null, sometimes left out (nil).
    private static func value(_ attribute: RandomPipeline.Attribute, using random: inout SeededGenerator) -> JSON? {
        switch Int.random(in: 0..<8, using: &random) {
        case 0: return nil
        case 1: return .null
        default:
            let number = Int.random(in: 0...3, using: &random)
            return attribute.isText ? .text("v\(number)") : .integer(number)
        }
    }

    /// The records as pages of one to three (`{"data": [...], "next": url}`), at `<base>/<name>/<n>`.
    static func pages(_ records: [JSON], base: String, name: String, using random: inout SeededGenerator) -> [String: String] {
        var chunks: [[JSON]] = []
        var rest = records[...]
        while !rest.isEmpty {
            let size = Int.random(in: 1...3, using: &random)
            chunks.append(Array(rest.prefix(size)))
            rest = rest.dropFirst(size)
        }
        if chunks.isEmpty { chunks = [[]] }
        var pages: [String: String] = [:]
        for (index, chunk) in chunks.enumerated() {
            let next: JSON = index + 1 < chunks.count ? .text("\(base)/\(name)/\(index + 2)") : .null
            pages["/\(name)/\(index + 1)"] = JSON.object([("data", .array(chunk)), ("next", next)]).text
        }
        return pages
    }
}
