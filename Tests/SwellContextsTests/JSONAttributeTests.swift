import Foundation
@testable import SwellSQLite
import SwellStoreCore
import Testing
@testable import SwellContexts
import SwellStore
import SwellStoreTestSupport

/// The `json` attribute type: a `String` of JSON text, kept as TEXT unchanged.
@Suite(.onEveryStore) struct JSONAttributeTests {
    let directory = TemporaryDirectory()

    static let documentEntity = EntityDescription(
        name: "Document",
        attributes: [
            AttributeDescription(name: "id", type: .integer),
            AttributeDescription(name: "body", type: .json, isOptional: true),
        ],
        uniquenessConstraint: ["id"]
    )

    @Test(.sqliteStoreOnly) func aJsonAttributeIsATextColumnAndComesBackAsTheSameString() async throws {
        let model = ManagedObjectModel(entities: [Self.documentEntity])
        let container = try makeContainer(directory, name: "documents", model: model)
        let text = #"{"b":1,"a":[1,[2,{"z":null}]],"é":"x\"y"}"#
        try await container.writerContext.perform {
            let context = container.writerContext
            for (id, body) in [(1, text as String?), (2, "[]"), (3, nil)] {
                let document = context.insertNewObject(forEntityName: "Document")
                document["id"] = id
                document["body"] = body
            }
            try context.save()
        }
        let connection = try SQLiteConnection(path: container.storeURL.path, mode: .readOnly)
        let columns = try connection.query("SELECT name, type FROM pragma_table_info('Document') WHERE name = 'body'")
        #expect(columns == [[.text("body"), .text("TEXT")]])
        #expect(try connection.query("SELECT typeof(body), body FROM Document ORDER BY id")
            == [[.text("text"), .text(text)], [.text("text"), .text("[]")], [.text("null"), .null]])

        // A fresh container over the file reads the same strings; a predicate compares the text.
        let reopened = try makeContainer(directory, name: "documents", model: model)
        let bodies = try await reopened.viewContext.perform { () throws -> [String?] in
            var request = FetchRequest(entityName: "Document")
            request.sortDescriptors = [FetchSortDescriptor(key: "id", ascending: true)]
            return try reopened.viewContext.fetch(request).map { $0["body"] as? String }
        }
        #expect(bodies == [text, "[]", nil])
        #expect(try count(reopened.viewContext, "Document", "body == %@", "[]") == 1)
    }

    @Test func aValueThatIsNotAStringFailsTheSaveNamingTheJsonType() async throws {
        let container = try makeContainer(directory, name: "documents", model: ManagedObjectModel(entities: [Self.documentEntity]))
        let view = container.viewContext
        let error = await view.perform { () -> StoreError? in
            let document = view.insertNewObject(forEntityName: "Document")
            document["id"] = 1
            document["body"] = ["a": 1]
            do { try view.save(); return nil } catch { return error as? StoreError }
        }
        guard let error, error.kind == .typeMismatch, let attribute = error.attribute, let expected = error.expectedType else {
            Issue.record("expected typeMismatch, got \(String(describing: error))")
            return
        }
        #expect(attribute == "body")
        #expect(expected == .json)
    }
}
