import Foundation
import Testing
@testable import SwellContexts
import SwellStore
import SwellStoreTestSupport

/// Many-to-many (Issue.labels ↔ Label.issues), an ordered to-many without an inverse
/// (Playlist.songs) and owned children through a join table (Post.comments, cascade).
let joinModel = ManagedObjectModel(entities: [
    EntityDescription(name: "Issue", attributes: [AttributeDescription(name: "id", type: .integer)],
                      relationships: [RelationshipDescription(name: "labels", destination: "Label", toMany: true, inverse: "issues")],
                      uniquenessConstraint: ["id"]),
    EntityDescription(name: "Label", attributes: [AttributeDescription(name: "name", type: .string)],
                      relationships: [RelationshipDescription(name: "issues", destination: "Issue", toMany: true, inverse: "labels")],
                      uniquenessConstraint: ["name"]),
    EntityDescription(name: "Playlist", attributes: [AttributeDescription(name: "title", type: .string)],
                      relationships: [RelationshipDescription(name: "songs", destination: "Song", toMany: true, isOrdered: true)]),
    EntityDescription(name: "Song", attributes: [AttributeDescription(name: "name", type: .string)]),
    EntityDescription(name: "Post", attributes: [AttributeDescription(name: "id", type: .integer)],
                      relationships: [RelationshipDescription(name: "comments", destination: "Comment", toMany: true, isOrdered: true,
                                                              deleteRule: .cascade)],
                      uniquenessConstraint: ["id"]),
    EntityDescription(name: "Comment", attributes: [AttributeDescription(name: "body", type: .string)]),
])

func names(_ value: Any?) -> [String] {
    if let array = value as? [ManagedObject] { return array.compactMap { ($0["name"] ?? $0["body"]) as? String } }
    if let set = value as? Set<ManagedObject> { return set.compactMap { $0["name"] as? String }.sorted() }
    return []
}

@Suite("Relationships: join tables (Store guarantees 28, 29, 31, 32, 35)", .onEveryStore)
struct JoinTableTests {
    @Test("a many-to-many is kept in step on both sides and stored as <Entity>_<relationship> with a column per side")
    func manyToMany() async throws {
        let directory = TemporaryDirectory()
        let container = try makeContainer(directory, name: "join", model: joinModel)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let bug = context.insertNewObject(forEntityName: "Label")
            bug["name"] = "bug"
            let ui = context.insertNewObject(forEntityName: "Label")
            ui["name"] = "ui"
            let first = context.insertNewObject(forEntityName: "Issue")
            first["id"] = 1
            let second = context.insertNewObject(forEntityName: "Issue")
            second["id"] = 2
            first.setValue(Set([bug, ui]), forKey: "labels")
            bug.mutableSetValue(forKey: "issues").add(second)
            #expect(names(first.value(forKey: "labels")) == ["bug", "ui"])
            #expect(names(second.value(forKey: "labels")) == ["bug"])
            #expect((bug.value(forKey: "issues") as? Set<ManagedObject>) == [first, second])
            first.mutableSetValue(forKey: "labels").remove(bug)
            #expect((bug.value(forKey: "issues") as? Set<ManagedObject>) == [second])
            try context.save()
        }
        try await container.saveToDisk()
        try onSQLiteFile(directory, "join") { (url: URL) throws in
            #expect(try query(url, "SELECT i.id, l.name FROM Issue_labels j JOIN Issue i ON j.Issue = i._pk JOIN Label l ON j.labels = l._pk ORDER BY i.id, l.name")
                == [[.integer(1), .text("ui")], [.integer(2), .text("bug")]])
            #expect(try query(url, "SELECT \"from\", \"table\" FROM pragma_foreign_key_list('Issue_labels') ORDER BY \"from\"")
                == [[.text("Issue"), .text("Issue")], [.text("labels"), .text("Label")]])
            #expect(try query(url, "SELECT count(*) FROM sqlite_master WHERE name = 'Label_issues'") == [[.integer(0)]])
            #expect(try query(url, "PRAGMA foreign_key_check").isEmpty)
        }
        // A fresh stack reads both sides back from the join table.
        let reopened = try makeContainer(directory, name: "join", model: joinModel)
        let reader = reopened.newBackgroundContext()
        try reader.performAndWait {
            let bug = try objects(reader, "Label", where: "name == 'bug'").first!
            #expect((bug.value(forKey: "issues") as? Set<ManagedObject>)?.map { $0["id"] as? Int } == [2])
        }
    }

    @Test("an ordered to-many without an inverse keeps its order in _order, through saves and reopening")
    func orderedWithoutInverse() async throws {
        let directory = TemporaryDirectory()
        let container = try makeContainer(directory, name: "join", model: joinModel)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let playlist = context.insertNewObject(forEntityName: "Playlist")
            playlist["title"] = "mix"
            let songs = ["c", "a", "b"].map { name -> ManagedObject in
                let song = context.insertNewObject(forEntityName: "Song")
                song["name"] = name
                return song
            }
            let ordered = playlist.mutableOrderedSetValue(forKey: "songs")
            for song in songs { ordered.append(song) }
            let d = context.insertNewObject(forEntityName: "Song")
            d["name"] = "d"
            ordered.insert(d, at: 1)
            #expect(names(playlist.value(forKey: "songs")) == ["c", "d", "a", "b"])
            try context.save()
        }
        try await container.saveToDisk()
        try onSQLiteFile(directory, "join") { (url: URL) throws in
            #expect(try query(url, "SELECT s.name FROM Playlist_songs j JOIN Song s ON j.songs = s._pk ORDER BY j._order")
                == [[.text("c")], [.text("d")], [.text("a")], [.text("b")]])
        }
        let reopened = try makeContainer(directory, name: "join", model: joinModel)
        let reader = reopened.newBackgroundContext()
        try reader.performAndWait {
            let playlist = try objects(reader, "Playlist").first!
            #expect(names(playlist.value(forKey: "songs")) == ["c", "d", "a", "b"])
            // Deleting a song with no inverse unlinks it: no link names a row that is gone.
            reader.delete(try objects(reader, "Song", where: "name == 'a'").first!)
            try reader.save()
            #expect(names(playlist.value(forKey: "songs")) == ["c", "d", "b"])
        }
        try await reopened.saveToDisk()
        try onSQLiteFile(directory, "join") { (url: URL) throws in
            #expect(try query(url, "PRAGMA foreign_key_check").isEmpty)
        }
    }

    @Test("delete rules through join tables: nullify unlinks a deleted label, cascade deletes owned comments")
    func deleteRules() async throws {
        let directory = TemporaryDirectory()
        let container = try makeContainer(directory, name: "join", model: joinModel)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let label = context.insertNewObject(forEntityName: "Label")
            label["name"] = "bug"
            let issue = context.insertNewObject(forEntityName: "Issue")
            issue["id"] = 1
            issue.mutableSetValue(forKey: "labels").add(label)
            let post = context.insertNewObject(forEntityName: "Post")
            post["id"] = 1
            for body in ["x", "y"] {
                let comment = context.insertNewObject(forEntityName: "Comment")
                comment["body"] = body
                post.mutableOrderedSetValue(forKey: "comments").append(comment)
            }
            try context.save()
            context.delete(label)
            context.delete(post)
            try context.save()
            #expect((issue.value(forKey: "labels") as? Set<ManagedObject>)?.isEmpty == true)
            #expect(try objects(context, "Comment").isEmpty)
        }
        try await container.saveToDisk()
        try onSQLiteFile(directory, "join") { (url: URL) throws in
            #expect(try query(url, "SELECT (SELECT count(*) FROM Issue_labels), (SELECT count(*) FROM Post_comments), (SELECT count(*) FROM Comment)")
                == [[.integer(0), .integer(0), .integer(0)]])
            #expect(try query(url, "PRAGMA foreign_key_check").isEmpty)
        }
    }

    @Test("two new issues with one key from two workers become one that keeps the union of their labels")
    func mergeKeepsUnion() async throws {
        let directory = TemporaryDirectory()
        let container = try makeContainer(directory, name: "join", model: joinModel)
        await MainActor.run { container.viewContext.mergePolicy = .mergeByPropertyObjectTrump }
        for labels in [["bug"], ["ui", "bug"]] {
            let worker = container.newBackgroundContext()
            try worker.performAndWait {
                let issue = worker.insertNewObject(forEntityName: "Issue")
                issue["id"] = 42
                for name in labels {
                    let existing = try objects(worker, "Label", where: "name == %@", name).first
                    let label = existing ?? worker.insertNewObject(forEntityName: "Label")
                    label["name"] = name
                    issue.mutableSetValue(forKey: "labels").add(label)
                }
                try worker.save()
            }
        }
        try await container.saveToDisk()
        try onSQLiteFile(directory, "join") { (url: URL) throws in
            #expect(try query(url, "SELECT count(*) FROM Issue") == [[.integer(1)]])
            #expect(try query(url, "SELECT l.name FROM Issue_labels j JOIN Label l ON j.labels = l._pk ORDER BY l.name")
                == [[.text("bug")], [.text("ui")]])
            #expect(try query(url, "PRAGMA foreign_key_check").isEmpty)
        }
    }

    @Test("the did-save notice lists the issue with 'labels' and the labels that joined with 'issues'")
    func didSave() throws {
        let directory = TemporaryDirectory()
        let container = try makeContainer(directory, name: "join", model: joinModel)
        let context = container.newBackgroundContext()
        let recorder = SaveRecorder(context)
        let (issueID, labelID) = try context.performAndWait { () throws -> (ObjectID, ObjectID) in
            let label = context.insertNewObject(forEntityName: "Label")
            label["name"] = "bug"
            let issue = context.insertNewObject(forEntityName: "Issue")
            issue["id"] = 1
            try context.save()
            issue.mutableSetValue(forKey: "labels").add(label)
            try context.save()
            return (issue.objectID, label.objectID)
        }
        let changes = try #require(recorder.changes.last)
        #expect(changes.updated[issueID] == ["labels"])
        #expect(changes.updated[labelID] == ["issues"])
    }
}
