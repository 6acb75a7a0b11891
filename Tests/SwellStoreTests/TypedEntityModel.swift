import Foundation
import SwellStore

// The typed entities the typed-entity tests use: the store contract's own example.

@Entity final class Spot {
    @Unique var name: String
    var latitude: Double?
    /// No initial value and no inverse named: JournalEntry.spot names this one.
    var entries: Set<JournalEntry>
    /// Neither side names an inverse: the model pairs it with Region.spots.
    var region: Region?

    init(name: String, latitude: Double? = nil) {
        self.name = name
        self.latitude = latitude
    }
}

@Entity final class JournalEntry {
    @Unique var id: Int
    var date: Date
    var height: String?
    var rating: Int?
    var isFavourite: Bool = false
    var conditions: JSONText?
    @Relationship(inverse: "entries", deleteRule: .nullify) var spot: Spot?
    @Relationship(inverse: "entries", deleteRule: .nullify) var tags: Set<Tag> = []
    @Transient var scratch = 0

    init(id: Int, date: Date, height: String? = nil, rating: Int? = nil) {
        self.id = id
        self.date = date
        self.height = height
        self.rating = rating
    }
}

@Entity final class Tag {
    var label: String
    /// Named like a predicate keyword (ALL): a typed predicate still names it.
    var all: Int?
    var entries: Set<JournalEntry> = []

    #Unique<Tag>([\.label])

    init(label: String) { self.label = label }
}

@Entity final class Region {
    var name: String
    var spots: Set<Spot> = []
    init(name: String) { self.name = name }
}

/// An album and its photos: a to-one (`cover`) named before a to-many (`photos`) that the
/// to-one's insertion links through an inverse.
@Entity final class Album {
    var title: String
    @Relationship(inverse: "coverOf") var cover: Photo?
    @Relationship(inverse: "album") var photos: [Photo] = []
    init(title: String) { self.title = title }
}

@Entity final class Photo {
    var caption: String
    @Relationship(inverse: "photos") var album: Album?
    @Relationship(inverse: "cover") var coverOf: Album?
    init(caption: String) { self.caption = caption }
}

/// The typed model, with a described entity beside it.
let typedModel = ManagedObjectModel(entities: [
    JournalEntry.self, Spot.self, Tag.self, Album.self, Photo.self, Region.self,
    EntityDescription(name: "Note", attributes: [AttributeDescription(name: "text", type: .string)]),
])

/// The contract's API block as written: no initialisers, the inverse named on one side only.
@Entity final class ContractEntry {
    @Unique var id: Int
    var date: Date
    var rating: Int?
    @Relationship(inverse: "entries", deleteRule: .nullify) var spot: ContractSpot?
}

@Entity final class ContractSpot {
    var name: String
    var entries: Set<ContractEntry>
}
