import Foundation
import Testing
@testable import SwellContexts
import SwellStore
import SwellStoreTestSupport

@Suite("Relationships: an ordered to-many with a to-one inverse (Store guarantees 28, 29, 35)", .onEveryStore)
struct OrderedInverseTests {
    static let model = ManagedObjectModel(entities: [
        EntityDescription(name: "Album", attributes: [AttributeDescription(name: "title", type: .string)],
                          relationships: [RelationshipDescription(name: "tracks", destination: "Track", toMany: true, isOrdered: true,
                                                                  inverse: "album", deleteRule: .cascade)]),
        EntityDescription(name: "Track", attributes: [AttributeDescription(name: "name", type: .string)],
                          relationships: [RelationshipDescription(name: "album", destination: "Album", inverse: "tracks")]),
    ])

    private func names(_ value: Any?) -> [String] {
        ((value as? [ManagedObject]) ?? []).compactMap { $0["name"] as? String }
    }

    @Test("the order is kept beside the to-one, through inserts at a position, moves, saves and reopening")
    func order() async throws {
        let directory = TemporaryDirectory()
        let container = try makeContainer(directory, name: "albums", model: Self.model)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let album = context.insertNewObject(forEntityName: "Album")
            album["title"] = "Blue"
            let tracks = ["c", "a", "b"].map { name -> ManagedObject in
                let track = context.insertNewObject(forEntityName: "Track")
                track["name"] = name
                return track
            }
            let ordered = album.mutableOrderedSetValue(forKey: "tracks")
            ordered.append(tracks[0])
            ordered.append(tracks[1])
            tracks[2].setValue(album, forKey: "album")   // from the to-one side: joins at the end
            #expect(names(album.value(forKey: "tracks")) == ["c", "a", "b"])
            ordered.insert(tracks[2], at: 0)
            #expect(names(album.value(forKey: "tracks")) == ["b", "c", "a"])
            album.setValue([tracks[1], tracks[2]], forKey: "tracks")
            #expect(names(album.value(forKey: "tracks")) == ["a", "b"])
            #expect(tracks[0].value(forKey: "album") == nil)
            try context.save()
        }
        try await container.saveToDisk()
        try onSQLiteFile(directory, "albums") { (url: URL) throws in
            #expect(try query(url, "SELECT name FROM Track WHERE album IS NOT NULL ORDER BY _album_order") == [[.text("a")], [.text("b")]])
            #expect(try query(url, "SELECT count(*) FROM sqlite_master WHERE name LIKE 'Album_%' AND type = 'table'") == [[.integer(0)]])
        }
        let reader = try makeContainer(directory, name: "albums", model: Self.model).newBackgroundContext()
        try reader.performAndWait {
            let album = try reader.fetch(FetchRequest(entityName: "Album")).first!
            #expect(names(album.value(forKey: "tracks")) == ["a", "b"])
            reader.delete(album)
            try reader.save()
            #expect(try reader.count(for: FetchRequest(entityName: "Track")) == 1)   // cascade took a and b; c was unlinked before
        }
    }
}

@Suite("Relationships: a link to an object only the parent has (Store guarantees 30)", .onEveryStore)
struct ParentOnlyLinkTests {
    @Test("a worker's new entry points at a spot only the view context has; the link resolves at every level and on disk")
    @MainActor func linkToParentOnlyObject() async throws {
        let directory = TemporaryDirectory()
        let container = try makeGraph(directory)
        let view = container.viewContext
        let spotID = try await view.perform { () throws -> ObjectID in
            let spot = view.insertNewObject(forEntityName: "Spot")
            spot["name"] = "Steamer Lane"
            return spot.objectID   // unsaved: only the view context has it
        }
        let worker = container.newBackgroundContext()
        try await worker.perform {
            let spot = try worker.existingObject(with: spotID)
            let entry = worker.insertNewObject(forEntityName: "Entry")
            entry["id"] = 3
            entry.setValue(spot, forKey: "spot")
            try worker.save()
        }
        let names = await view.perform(schedule: .enqueued) { () -> [String] in
            let spot = view.object(with: spotID)
            return ((spot.value(forKey: "entries") as? Set<ManagedObject>) ?? []).map { "\($0["id"] ?? "")" }
        }
        #expect(names == ["3"])
        try await view.perform { try view.save() }
        try await container.saveToDisk()
        try onSQLiteFile(directory, "graph") { (url: URL) throws in
            #expect(try query(url, "SELECT e.id, s.name FROM Entry e JOIN Spot s ON e.spot = s._pk")
                == [[.integer(3), .text("Steamer Lane")]])
        }
    }

    @Test("the ordered-set API: remove(at:), index(of:), first and last follow the order")
    func orderedSetAPI() throws {
        let directory = TemporaryDirectory()
        let container = try makeContainer(directory, name: "albums", model: OrderedInverseTests.model)
        let context = container.newBackgroundContext()
        context.performAndWait {
            let album = context.insertNewObject(forEntityName: "Album")
            album["title"] = "Green"
            let tracks = (1...4).map { number -> ManagedObject in
                let track = context.insertNewObject(forEntityName: "Track")
                track["name"] = "t\(number)"
                album.mutableOrderedSetValue(forKey: "tracks").add(track)
                return track
            }
            let ordered = album.mutableOrderedSetValue(forKey: "tracks")
            #expect(ordered.index(of: tracks[2]) == 2)
            ordered.remove(at: 0)
            #expect(ordered.first === tracks[1])
            #expect(ordered.last === tracks[3])
            #expect(ordered.count == 3)
            #expect(tracks[0].value(forKey: "album") == nil)
        }
    }
}
