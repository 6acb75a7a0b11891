import Foundation
@testable import SwellPostgres
import SwellContexts
import SwellTestSupport
import Testing

/// Every session of a PostgreSQL store asks for TCP keepalives at both ends, so a runner
/// whose host vanishes loses its session — its hold within seconds, its transaction and row
/// locks within about 30 s — and a user's own `options` in the URL still apply.
@Suite struct PostgresSessionSettingsTests {
    private static let model = ManagedObjectModel(entities: [
        EntityDescription(name: "Item", attributes: [AttributeDescription(name: "id", type: .integer)], uniquenessConstraint: ["id"]),
    ])

    @Test func dataSessionsHaveServerSideKeepalivesAndKeepTheUsersOptions() throws {
        let server = try PostgresServer.shared.get()
        let url = URL(string: server.url() + "?schema=settings_\(UUID().uuidString.prefix(8).lowercased())&options=-c%20statement_timeout%3D4321")!
        let store = PostgresStore(url: url)
        try store.load(model: Self.model)
        let settings = try store.read { reader in
            let connection = try #require(reader as? PostgresReader).connection
            return try ["tcp_keepalives_idle", "tcp_keepalives_interval", "tcp_keepalives_count", "tcp_user_timeout",
                        "client_connection_check_interval", "statement_timeout"].map { name in
                try connection.query("SELECT current_setting($1::text)", [.text(name)]).first?.first
            }
        }
        #expect(settings == [.text("10"), .text("5"), .text("3"), .text("30000"), .text("5s"), .text("4321ms")])
    }

    @Test func aHoldSessionAsksForKeepalivesOfSecondsAfterTheUsersOptions() throws {
        let store = PostgresStore(url: URL(string: "postgresql://swell@db.example:5432/app?options=-c%20statement_timeout%3D4321&sslmode=require")!)
        let conninfo = store.conninfo(adding: PostgresStore.holdParameters(source: "orders"))
        let options = try #require(URLComponents(string: conninfo)?.queryItems?.filter { $0.name == "options" })
        #expect(options.count == 1)
        // Swell's settings first, the user's after (later -c settings win).
        #expect(options.first?.value == "-c tcp_keepalives_idle=2 -c tcp_keepalives_interval=1 -c tcp_keepalives_count=2 "
                + "-c tcp_user_timeout=5000 -c client_connection_check_interval=1000 -c statement_timeout=4321")
        #expect(conninfo.contains("sslmode=require") && conninfo.contains("keepalives_idle=2") && conninfo.contains("application_name=swell"))
    }
}
