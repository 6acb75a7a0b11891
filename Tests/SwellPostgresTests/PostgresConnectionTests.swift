import Foundation
import SwellContexts
import SwellTestSupport
@testable import SwellPostgres
import Testing

/// The libpq client against a real server the suite starts (issue 11, item 1).
@Suite struct PostgresConnectionTests {
    private func server() throws -> PostgresServer { try PostgresServer.shared.get() }

    @Test func aQueryWithParametersComesBackTypedAsTheStoreKeepsValues() throws {
        let connection = try PostgresConnection(try server().url())
        defer { connection.close() }
        let rows = try connection.query("SELECT $1::bigint + 1, $2::text || '!', $3::double precision * 2, true, NULL::text",
                                        [.integer(41), .text("swell"), .real(1.25)])
        #expect(rows == [[.integer(42), .text("swell!"), .real(2.5), .integer(1), .null]])
        try connection.query("CREATE TEMP TABLE t (id bigint PRIMARY KEY, name text)")
        try connection.query("INSERT INTO t VALUES ($1, $2), ($3, $4)", [.integer(1), .text("a"), .integer(2), .null])
        #expect(try connection.query("SELECT id, name FROM t ORDER BY id") == [[.integer(1), .text("a")], [.integer(2), .null]])
    }

    /// Binary results read as the text results do: dates as `extract(epoch …)::float8` gives
    /// them (before 1685 and after 2255 too), booleans 0/1; a type it cannot read is refused.
    @Test func binaryResultsReadTheValuesTextResultsRead() throws {
        let connection = try PostgresConnection(try server().url())
        defer { connection.close() }
        let stamps = ["2023-11-14 22:13:20.123456+00", "1600-01-01 00:00:00.000001+00", "2300-06-30 12:00:00.999999+00",
                      "0001-01-01 00:00:00+00", "1970-01-01 00:00:00.000001+00"]
        for stamp in stamps {
            let typed = "SELECT 7::int2, 8::int4, 9::int8, 1.5::float4, 0.1::float8, true, false, '\(stamp)'::timestamptz, 'é'::text, '{\"a\":1}'::json, NULL::text"
            let asStored = "SELECT 7::int2, 8::int4, 9::int8, 1.5::float4, 0.1::float8, true, false, extract(epoch from '\(stamp)'::timestamptz)::float8, 'é'::text, '{\"a\":1}'::json::text, NULL::text"
            #expect(try connection.query(typed, binaryResults: true) == connection.query(asStored), "\(stamp)")
        }
        #expect(try connection.query("SELECT 'infinity'::timestamptz, '-infinity'::timestamptz", binaryResults: true)
                == [[.real(.infinity), .real(-.infinity)]])
        #expect(throws: PostgresError.self) { try connection.query("SELECT 1.5::numeric", binaryResults: true) }
    }

    @Test func aFailedStatementGivesItsSQLStateAndAClosedConnectionSaysSo() throws {
        let connection = try PostgresConnection(try server().url())
        #expect(throws: PostgresError.self) { try connection.query("SELECT * FROM no_such_table") }
        do {
            try connection.query("SELECT * FROM no_such_table")
        } catch {
            guard case .statementFailed(let state, let message, _) = error else { Issue.record("\(error)"); return }
            #expect(state == "42P01")
            #expect(message.contains("no_such_table"))
        }
        connection.close()
        #expect(!connection.isOpen)
        #expect(throws: PostgresError.self) { try connection.query("SELECT 1") }
    }

    @Test func aRefusedLoginNamesHostPortDatabaseAndUserButNeverThePassword() throws {
        let server = try server()
        let secret = "s3cret-\(UUID().uuidString.prefix(8))"
        // No such database: the server refuses the login.
        let url = "postgresql://\(server.user):\(secret)@127.0.0.1:\(server.port)/missing_db"
        do {
            _ = try PostgresConnection(url)
            Issue.record("connected to a database that does not exist")
        } catch {
            let text = error.description
            #expect(text.contains("swell@127.0.0.1:\(server.port)/missing_db"), "\(text)")
            #expect(text.contains("missing_db"))
            #expect(!text.contains(secret), "\(text)")
        }
    }
}
