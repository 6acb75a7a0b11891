// libFuzzer target for FetchPredicate: any text as a predicate format must
// parse, bind to an entity and compile to SQL (and evaluate in memory), or
// give a FetchPredicateError, never a crash. Built by scripts/fuzz.sh.
import SwellStore

let fuzzEntity = EntityDescription(name: "Item", attributes: [
    AttributeDescription(name: "id", type: .integer),
    AttributeDescription(name: "title", type: .string, isOptional: true),
    AttributeDescription(name: "score", type: .double, isOptional: true),
    AttributeDescription(name: "flag", type: .boolean, isOptional: true),
    AttributeDescription(name: "when", type: .date, isOptional: true),
], uniquenessConstraint: ["id"])

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPredicate(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: start, count: count), as: UTF8.self)
    if let predicate = try? FetchPredicate.parse(format: text) {
        _ = try? predicate.validate(against: fuzzEntity)
    }
    return 0
}
