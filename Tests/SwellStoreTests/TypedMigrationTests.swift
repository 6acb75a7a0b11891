import Foundation
import Testing
import SwellStore
import SwellStoreTestSupport

/// Statement 58 in the typed layer: versions as enums of `@Entity` classes (SwiftData's
/// `VersionedSchema`), `@Renamed(from:)`, `@Entity(renamedFrom:)`, a literal initial value as the
/// default, a typed plan.
enum TripsV1: VersionedSchema {
    static let versionIdentifier = "1"
    static var models: [any PersistentModel.Type] { [Trip.self, Stop.self] }

    @Entity final class Trip {
        @Unique var id: Int
        var name: String?
        @Relationship(inverse: "trip") var stops: Set<Stop> = []
        init(id: Int, name: String?) {
            self.id = id
            self.name = name
        }
    }

    @Entity final class Stop {
        var place: String
        var trip: Trip?
        init(place: String) { self.place = place }
    }
}

enum TripsV2: VersionedSchema {
    static let versionIdentifier = "2"
    static var models: [any PersistentModel.Type] { [Journey.self, Stop.self] }

    @Entity(renamedFrom: "Trip") final class Journey {
        @Unique var id: Int
        @Renamed(from: "name") var title: String?
        var stars: Int = 3
        @Renamed(from: "stops") @Relationship(inverse: "journey") var legs: Set<Stop> = []
        init(id: Int) { self.id = id }
    }

    @Entity final class Stop {
        var place: String
        @Renamed(from: "trip") var journey: Journey?
        init(place: String) { self.place = place }
    }
}

enum TripsPlan: SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] { [TripsV1.self, TripsV2.self] }
    static var stages: [MigrationStage] { [.lightweight] }
}

@Suite(.onEveryStore) struct TypedMigrationTests {
    let directory = TemporaryDirectory()

    @Test func typedVersionsMigrateByAPlanKeepingRenamedValuesAndLinks() async throws {
        let url = directory.storeURL("trips")
        let first = PersistentContainer(name: "trips", managedObjectModel: TripsV1.managedObjectModel, storeURL: url)
        try first.loadPersistentStores()
        try first.writerContext.performAndWait {
            let trip = TripsV1.Trip(id: 1, name: "Coast")
            first.writerContext.insert(trip)
            for place in ["Pacifica", "Half Moon Bay"] {
                let stop = TripsV1.Stop(place: place)
                first.writerContext.insert(stop)
                stop.trip = trip
            }
            try first.writerContext.save()
        }
        let second = PersistentContainer(name: "trips", managedObjectModel: TripsV2.managedObjectModel, storeURL: url,
                                         migrationPlan: MigrationPlan(TripsPlan.self))
        try second.loadPersistentStores()
        let journeys = try second.writerContext.performAndWait {
            try second.writerContext.fetch(FetchDescriptor<TripsV2.Journey>()).map { journey in
                (journey.id, journey.title, journey.stars, Set(journey.legs.map(\.place)))
            }
        }
        #expect(journeys.count == 1)
        #expect(journeys.first?.0 == 1)
        #expect(journeys.first?.1 == "Coast")
        #expect(journeys.first?.2 == 3)
        #expect(journeys.first?.3 == ["Pacifica", "Half Moon Bay"])
        #expect(TripsV2.managedObjectModel.versionIdentifier == "2")
        withExtendedLifetime(first) {}
    }
}
