import Foundation
import SwellStore

// The typed entities the typed-entity tests use: the store contract's own example.

@Entity package final class Spot {
    @Unique package var name: String
    package var latitude: Double?
    /// No initial value and no inverse named: JournalEntry.spot names this one.
    package var entries: Set<JournalEntry>
    /// Neither side names an inverse: the model pairs it with Region.spots.
    package var region: Region?

    package init(name: String, latitude: Double? = nil) {
        self.name = name
        self.latitude = latitude
    }
}

@Entity package final class JournalEntry {
    @Unique package var id: Int
    package var date: Date
    package var height: String?
    package var rating: Int?
    package var isFavourite: Bool = false
    package var conditions: JSONText?
    @Relationship(inverse: "entries", deleteRule: .nullify) package var spot: Spot?
    @Relationship(inverse: "entries", deleteRule: .nullify) package var tags: Set<Tag> = []
    @Transient package var scratch = 0

    package init(id: Int, date: Date, height: String? = nil, rating: Int? = nil) {
        self.id = id
        self.date = date
        self.height = height
        self.rating = rating
    }
}

@Entity package final class Tag {
    package var label: String
    /// Named like a predicate keyword (ALL): a typed predicate still names it.
    package var all: Int?
    package var entries: Set<JournalEntry> = []

    #Unique<Tag>([\.label])

    package init(label: String) { self.label = label }
}

@Entity package final class Region {
    package var name: String
    package var spots: Set<Spot> = []
    package init(name: String) { self.name = name }
}

/// An album and its photos: a to-one (`cover`) named before a to-many (`photos`) that the
/// to-one's insertion links through an inverse.
@Entity package final class Album {
    package var title: String
    @Relationship(inverse: "coverOf") package var cover: Photo?
    @Relationship(inverse: "album") package var photos: [Photo] = []
    package init(title: String) { self.title = title }
}

@Entity package final class Photo {
    package var caption: String
    @Relationship(inverse: "photos") package var album: Album?
    @Relationship(inverse: "cover") package var coverOf: Album?
    package init(caption: String) { self.caption = caption }
}

/// The typed model, with a described entity beside it.
package let typedModel = ManagedObjectModel(entities: [
    JournalEntry.self, Spot.self, Tag.self, Album.self, Photo.self, Region.self,
    EntityDescription(name: "Note", attributes: [AttributeDescription(name: "text", type: .string)]),
])

/// The contract's API block as written: no initialisers, the inverse named on one side only.
@Entity package final class ContractEntry {
    @Unique package var id: Int
    package var date: Date
    package var rating: Int?
    @Relationship(inverse: "entries", deleteRule: .nullify) package var spot: ContractSpot?
}

@Entity package final class ContractSpot {
    package var name: String
    package var entries: Set<ContractEntry>
}
