import Foundation
import SwellTestSupport
import Testing
@testable import SwellContexts
import SwellStore
import SwellStoreTestSupport

/// The package form of batch inserts the pipeline's nested records use (issue 21, item 4):
/// a to-one as a column of IDs (`BatchColumns.references`), a join-table to-many as a column of
/// member lists (`memberLists`), and each row's primary key reported (`reportsPrimaryKeys`).
/// Random batches against a model computed here, on whichever store the suite runs against;
/// `SWELL_LINK_SEEDS=N` runs seeds 1...N, a failure names its seed.
@Suite(.onEveryStore) struct BatchLinkColumnsTests {
    static let model = ManagedObjectModel(entities: [
        EntityDescription(name: "Post", attributes: [
            AttributeDescription(name: "id", type: .integer),
            AttributeDescription(name: "title", type: .string, isOptional: true),
        ], relationships: [
            RelationshipDescription(name: "author", destination: "Person"),
            RelationshipDescription(name: "tags", destination: "Tag", toMany: true, inverse: "posts"),
        ], uniquenessConstraint: ["id"]),
        EntityDescription(name: "Person", attributes: [
            AttributeDescription(name: "name", type: .string),
            AttributeDescription(name: "born", type: .integer, isOptional: true),
        ], uniquenessConstraint: ["name"]),
        EntityDescription(name: "Tag", attributes: [AttributeDescription(name: "name", type: .string)], relationships: [
            RelationshipDescription(name: "posts", destination: "Post", toMany: true, inverse: "tags"),
        ], uniquenessConstraint: ["name"]),
    ])

    static var seeds: [UInt64] {
        let count = ProcessInfo.processInfo.environment["SWELL_LINK_SEEDS"].flatMap(UInt64.init) ?? 12
        return Array(1...max(1, count))
    }

    /// A post as the model keeps it.
    struct Post: Equatable, CustomStringConvertible {
        var title: String?
        var author: String?
        var tags: Set<String>
        var description: String { "\(title ?? "nil") by \(author ?? "nobody") tagged \(tags.sorted())" }
    }

    @Test func randomBatchesOfLinkColumnsStoreWhatTheRowsSay() throws {
        for seed in Self.seeds {
            let directory = TemporaryDirectory()
            let container = try makeContainer(directory, name: "links", model: Self.model)
            var random = SeededGenerator(state: seed)
            var expected: [Int: Post] = [:]
            let worker = container.newBackgroundContext()
            worker.performAndWait { worker.mergePolicy = .mergeByPropertyObjectTrump }
            for batch in 1...5 {
                // Persons and tags first: their IDs, by name.
                let people = (0..<4).map { "p\($0)" }, tagNames = (0..<5).map { "t\($0)" }
                var personColumns = BatchColumns()
                let personName = personColumns.strings("name")
                for name in people { personColumns.append(name, to: personName) }
                let personIDs = try insert("Person", personColumns, in: worker)
                var tagColumns = BatchColumns()
                let tagName = tagColumns.strings("name")
                for name in tagNames { tagColumns.append(name, to: tagName) }
                let tagIDs = try insert("Tag", tagColumns, in: worker)
                #expect(personIDs.count == people.count && tagIDs.count == tagNames.count && !personIDs.contains(-1))

                // Posts: some met again in the batch (the later row wins), some unchanged from before.
                var columns = BatchColumns()
                let id = columns.integers("id"), title = columns.strings("title")
                let author = columns.references("author"), tags = columns.memberLists("tags")
                var batchModel: [Int: Post] = [:]
                var order: [Int] = []
                for _ in 0..<Int.random(in: 1...12, using: &random) {
                    let key = Int.random(in: 1...10, using: &random)
                    var post = expected[key] ?? Post(title: nil, author: nil, tags: [])
                    if expected[key] == nil || Int.random(in: 0..<3, using: &random) > 0 {
                        post.title = Bool.random(using: &random) ? "title \(Int.random(in: 0..<3, using: &random))" : nil
                        post.author = Bool.random(using: &random) ? people.randomElement(using: &random) : nil
                        post.tags = Set(tagNames.filter { _ in Int.random(in: 0..<3, using: &random) == 0 })
                    }
                    columns.append(Int64(key), to: id)
                    columns.append(post.title, to: title)
                    columns.append(post.author.map { personIDs[people.firstIndex(of: $0)!] }, to: author)
                    // Members in any order, one listed twice: the list is a set.
                    var members = post.tags.map { tagIDs[tagNames.firstIndex(of: $0)!] }.shuffled(using: &random)
                    if let first = members.first { members.append(first) }
                    columns.append(members: &members, to: tags)
                    batchModel[key] = post
                    order.append(key)
                }
                var inserted = 0, updated = 0, unchanged = 0
                for (key, post) in batchModel {
                    if let before = expected[key] { if before == post { unchanged += 1 } else { updated += 1 } } else { inserted += 1 }
                }
                let request = BatchInsertRequest(entityName: "Post", columns: columns)
                request.resultType = .changes
                request.reportsPrimaryKeys = true
                let result = try worker.performAndWait { try worker.execute(request) }
                expected.merge(batchModel) { $1 }
                let place = "seed \(seed), batch \(batch) (SWELL_LINK_SEEDS=\(seed) replays it)"
                #expect((result.inserted, result.updated, result.unchanged) == (inserted, updated, unchanged), "\(place)")
                #expect(result.primaryKeys.count == order.count && !result.primaryKeys.contains(-1), "\(place)")
                let stored = try storedPosts(container)
                #expect(stored == expected, "\(place): stored \(stored), expected \(expected)")
                // Every row of one key reports that key's one object.
                let byKey = Dictionary(zip(order, result.primaryKeys), uniquingKeysWith: { first, second in
                    #expect(first == second, "\(place)")
                    return first
                })
                let storedKeys = try storedPrimaryKeys(container)
                for (key, primaryKey) in byKey { #expect(storedKeys[key] == primaryKey, "\(place): post \(key)") }
            }
        }
    }

    private func insert(_ entity: String, _ columns: BatchColumns, in context: ManagedObjectContext) throws -> [Int64] {
        let request = BatchInsertRequest(entityName: entity, columns: columns)
        request.reportsPrimaryKeys = true
        return try context.performAndWait { try context.execute(request) }.primaryKeys
    }

    /// The stored posts, read by a fresh root context of its own coordinator.
    private func storedPosts(_ container: PersistentContainer) throws -> [Int: Post] {
        let reader = try makeRootContext(at: container.storeURL, model: Self.model)
        return try reader.performAndWait {
            var posts: [Int: Post] = [:]
            for object in try reader.fetch(FetchRequest(entityName: "Post")) {
                let author = (object.value(forKey: "author") as? ManagedObject)?["name"] as? String
                let tags = Set(object.mutableSetValue(forKey: "tags").allObjects.compactMap { $0["name"] as? String })
                posts[object["id"] as! Int] = Post(title: object["title"] as? String, author: author, tags: tags)
            }
            return posts
        }
    }

    /// Each stored post's primary key, by its `id`.
    private func storedPrimaryKeys(_ container: PersistentContainer) throws -> [Int: Int64] {
        let reader = try makeRootContext(at: container.storeURL, model: Self.model)
        return try reader.performAndWait {
            var keys: [Int: Int64] = [:]
            for object in try reader.fetch(FetchRequest(entityName: "Post")) { keys[object["id"] as! Int] = object.objectID.primaryKey }
            return keys
        }
    }
}
