import Foundation
import SwellTestSupport
import Testing
@testable import SwellContexts
import SwellStore
import SwellStoreTestSupport

/// A typed entity with rules: `@Validated`, a bounded to-many, and the class's own insert validation.
@Entity final class Gauge {
    @Unique var code: String
    @Validated(.minValue(0), .maxValue(100)) var level: Int
    @Relationship(inverse: "gauge", minimumModelCount: 1, maximumModelCount: 2) var readings: Set<Reading> = []

    init(code: String, level: Int) {
        self.code = code
        self.level = level
    }

    static func validateForInsert(_ gauge: Gauge) throws {
        if gauge.code.isEmpty { throw RefusedOnPurpose(why: "a gauge has a code") }
    }
}

@Entity final class Reading {
    var value: Double
    @Relationship(inverse: "readings") var gauge: Gauge?

    init(value: Double) { self.value = value }
}

/// Store guarantees 55 for typed entities: the rules the macro puts in the description are checked
/// by saves and by the typed object's `validateFor…` methods.
@Suite(.onEveryStore) struct TypedValidationTests {
    let directory = TemporaryDirectory()

    @Test func typedRulesCountsAndClassValidationAreChecked() throws {
        let container = try makeContainer(directory, name: "typedrules", model: ManagedObjectModel(entities: [Gauge.self, Reading.self]))
        let writer = container.writerContext
        try writer.performAndWait {
            let gauge = Gauge(code: "", level: 140)
            writer.insert(gauge)
            let readings = (1...3).map { Reading(value: Double($0)) }
            for reading in readings {
                writer.insert(reading)
                reading.gauge = gauge
            }
            let error = #expect(throws: StoreError.self) { try writer.save() }
            #expect(Set(error.map(ValidationFailures.seen) ?? []) == [
                ValidationFailures.Seen(entity: "Gauge", key: "level", value: .integer(140), rule: "maxValue 100"),
                ValidationFailures.Seen(entity: "Gauge", key: "readings", value: .integer(3), rule: "maxCount 2"),
                ValidationFailures.Seen(entity: "Gauge", key: nil, value: nil, rule: "validateForInsert"),
            ])
            #expect(throws: StoreError.self) { try gauge.validateForInsert() }
            #expect(throws: StoreError.self) { try gauge.validateValue(-1, forKey: "level") }
            gauge.code = "G1"
            gauge.level = 40
            writer.delete(readings[2])
            try gauge.validateForInsert()
            try writer.save()
        }
        #expect(try count(makeRootContext(at: container.storeURL, model: ManagedObjectModel(entities: [Gauge.self, Reading.self])), "Gauge", "level == 40") == 1)
    }
}
