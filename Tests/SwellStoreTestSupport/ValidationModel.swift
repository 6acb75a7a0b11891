import Foundation
import SwellStore

/// What the validation closures of `productEntity` throw.
package struct RefusedOnPurpose: Error, Equatable, CustomStringConvertible {
    package let why: String
    package var description: String { why }
    package init(why: String) { self.why = why }
}

/// Validation failures as the tests compare them: entity, key, value and rule.
package enum ValidationFailures {
    /// One failure.
    package struct Seen: Hashable, CustomStringConvertible {
        package let entity: String, key: String?, value: StoreValue?, rule: String
        package init(entity: String, key: String?, value: StoreValue?, rule: String) {
            self.entity = entity
            self.key = key
            self.value = value
            self.rule = rule
        }
        package var description: String { "\(entity).\(key ?? "-") = \(value.map { "\($0)" } ?? "-") [\(rule)]" }
    }

    /// The failures a save's error lists.
    package static func seen(_ error: any Error) -> [Seen] {
        ((error as? StoreError)?.validationFailures ?? []).map {
            Seen(entity: $0.entityName, key: $0.key, value: $0.value, rule: $0.rule.description)
        }
    }
}

/// The first day `Product.since` may hold (2020-01-01).
package let earliestSince = Date(timeIntervalSince1970: 1_577_836_800)

/// A product with every kind of rule (Store guarantees 55): a pattern and a length on its key,
/// a minimum length, integer and double bounds, allowed values, a date bound, a to-many of parts
/// with two to three members when it has any, and validation closures for insert (no product
/// named "forbidden"), update (a closed product has a rating) and delete (an open product stays).
package let productEntity = EntityDescription(
    name: "Product",
    attributes: [
        AttributeDescription(name: "sku", type: .string, validation: [.pattern("[A-Z]{2}-[0-9]+"), .maxLength(8)]),
        AttributeDescription(name: "name", type: .string, isOptional: true, validation: [.minLength(2)]),
        AttributeDescription(name: "rating", type: .integer, isOptional: true, validation: [.minValue(1), .maxValue(5)]),
        AttributeDescription(name: "price", type: .double, isOptional: true, validation: [.minValue(0.5)]),
        AttributeDescription(name: "status", type: .string, isOptional: true,
                             validation: [.allowedValues([.text("open"), .text("closed")])]),
        AttributeDescription(name: "since", type: .date, isOptional: true, validation: [.minValue(.date(earliestSince))]),
        AttributeDescription(name: "stock", type: .integer),
    ],
    relationships: [
        RelationshipDescription(name: "parts", destination: "Part", toMany: true, inverse: "product", minCount: 2, maxCount: 3),
        RelationshipDescription(name: "keeper", destination: "Keeper", inverse: "products", deleteRule: .deny),
    ],
    uniquenessConstraint: ["sku"],
    validateForInsert: { product in
        if product["name"] as? String == "forbidden" { throw RefusedOnPurpose(why: "no product is named forbidden") }
    },
    validateForUpdate: { product in
        if product["status"] as? String == "closed", product["rating"] == nil { throw RefusedOnPurpose(why: "a closed product has a rating") }
    },
    validateForDelete: { product in
        if product["status"] as? String == "open" { throw RefusedOnPurpose(why: "close a product before deleting it") }
    }
)

package let partEntity = EntityDescription(
    name: "Part",
    attributes: [AttributeDescription(name: "label", type: .string)],
    relationships: [RelationshipDescription(name: "product", destination: "Product", inverse: "parts")]
)

/// Keeps products: a keeper needs one product at least (a required to-many) and two at most, and
/// a product with a keeper cannot be deleted (`Product.keeper` denies). `tags` has no inverse, so
/// it lives in a join table (a column of its own, unlike `parts` and `products`).
package let keeperEntity = EntityDescription(
    name: "Keeper",
    attributes: [AttributeDescription(name: "name", type: .string)],
    relationships: [
        RelationshipDescription(name: "products", destination: "Product", toMany: true, isOptional: false, inverse: "keeper", maxCount: 2),
        RelationshipDescription(name: "tags", destination: "Tag", toMany: true, maxCount: 2),
    ]
)

package let tagEntity = EntityDescription(name: "Tag", attributes: [AttributeDescription(name: "word", type: .string)])

/// Shelves and books, many-to-many, each side at most two of the other: one side owns the join
/// table, so a link made from either side changes a row of the owner only.
package let shelfEntity = EntityDescription(
    name: "Shelf",
    attributes: [AttributeDescription(name: "label", type: .string)],
    relationships: [RelationshipDescription(name: "books", destination: "Book", toMany: true, inverse: "shelves", maxCount: 2)]
)

package let bookEntity = EntityDescription(
    name: "Book",
    attributes: [AttributeDescription(name: "title", type: .string)],
    relationships: [RelationshipDescription(name: "shelves", destination: "Shelf", toMany: true, inverse: "books", maxCount: 2)]
)

package let validationModel = ManagedObjectModel(entities: [productEntity, partEntity, keeperEntity, tagEntity, shelfEntity, bookEntity])
