import Foundation
import SwellStoreCore

/// Who holds a source: the runner's host and process id, and since when.
public struct SourceHolder: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var pid: String
    public var since: String

    public init(host: String, pid: String, since: String) {
        self.host = host
        self.pid = pid
        self.since = since
    }

    public var description: String { "host \(host), pid \(pid), since \(since)" }
}

/// Another runner holds the source.
public struct SourceHeldError: Error, Sendable, CustomStringConvertible {
    public var source: String
    public var holder: SourceHolder?

    public init(source: String, holder: SourceHolder?) {
        self.source = source
        self.holder = holder
    }

    public var description: String {
        "source \(source) is being run by another runner (\(holder?.description ?? "holder unknown"))"
    }
}

/// Per-source holds for runners sharing one database (PostgreSQL store guarantees 7): a
/// session advisory lock on its own connection, keyed by the schema and the
/// source. The server frees it when the session ends: at once when the holder
/// exits or is killed; when its host vanishes (no FIN ever comes), within
/// seconds, because the session asks for TCP keepalives at both ends
/// (`PostgresStore.keepalives`: 2 s idle, 1 s interval, 2 probes, 5 s
/// unanswered) — an idle session is otherwise noticed only after the server's
/// system default of hours. `application_name` names the holder's host and
/// process id, which `pg_stat_activity` shows and the refusal quotes. The pipeline
/// holds each source it runs this way (a file store has no such holds: one writing
/// run holds the whole file, `swell`'s lock file).
extension PostgresStore {
    /// Connection keywords of a hold's session.
    static func holdParameters(source: String) -> [URLQueryItem] {
        let host = ProcessInfo.processInfo.hostName
        return [URLQueryItem(name: "application_name", value: String("swell \(host) \(getpid())".prefix(63)))]
            + keepalives(idle: 2, interval: 1, count: 2, userTimeoutMilliseconds: 5000)
    }

    /// Takes the hold on `source`. With `wait`, blocks until it is free (calling `onWait`
    /// with the holder first); without, throws `SourceHeldError` naming the holder.
    public func holdSource(_ source: String, wait: Bool, onWait: (SourceHolder) -> Void) throws -> PostgresSourceHold {
        let connection: PostgresConnection
        do {
            connection = try PostgresConnection(conninfo(adding: Self.holdParameters(source: source)))
        } catch {
            throw StoreError(error)
        }
        do {
            if holdsInTable {
                try takeRowLock(source, on: connection, wait: wait, onWait: onWait)
            } else {
                try takeAdvisoryLock(source, on: connection, wait: wait, onWait: onWait)
            }
            return PostgresSourceHold(connection: connection)
        } catch let error as PostgresError {
            connection.close()
            throw StoreError(error)
        } catch {
            connection.close()
            throw error
        }
    }

    /// A session advisory lock keyed by the schema and the source.
    private func takeAdvisoryLock(_ source: String, on connection: PostgresConnection, wait: Bool, onWait: (SourceHolder) -> Void) throws {
        let key: [StoreValue] = [.text("swell:\(schemaName)"), .text(source)]
        let taken = try connection.query("SELECT pg_try_advisory_lock(hashtext($1::text), hashtext($2::text))", key)
        guard taken.first?.first != .integer(1) else { return }
        let holder = try Self.holder(of: source, schema: schemaName, on: connection)
        guard wait else { throw SourceHeldError(source: source, holder: holder) }
        if let holder { onWait(holder) }
        try connection.query("SELECT pg_advisory_lock(hashtext($1::text), hashtext($2::text))", key)
    }

    /// The lock-table fallback: the hold is a row lock (`SELECT … FOR UPDATE NOWAIT` on the
    /// source's row of `swell_holds`) in a transaction the holder's session keeps open, so
    /// it ends with the session as an advisory lock does. Who holds it is written to
    /// `swell_hold_holders` (committed, from another session) once the lock is taken.
    private func takeRowLock(_ source: String, on connection: PostgresConnection, wait: Bool, onWait: (SourceHolder) -> Void) throws {
        try connection.query("SET search_path TO \(PostgresSQL.quote(schemaName))")
        try connection.query("INSERT INTO swell_holds (source) VALUES ($1::text) ON CONFLICT (source) DO NOTHING", [.text(source)])
        try connection.query("BEGIN")
        var held = false
        do {
            try connection.query("SELECT source FROM swell_holds WHERE source = $1::text FOR UPDATE NOWAIT", [.text(source)])
        } catch {
            // 55P03 lock_not_available: another session holds the row.
            guard case .statementFailed(let state, _, _) = error, state == "55P03" else { throw error }
            held = true
        }
        if held {
            let holder = try tableHolder(of: source)
            guard wait else { throw SourceHeldError(source: source, holder: holder) }
            if let holder { onWait(holder) }
            try connection.query("ROLLBACK")
            try connection.query("BEGIN")
            try connection.query("SELECT source FROM swell_holds WHERE source = $1::text FOR UPDATE", [.text(source)])
        }
        let writer = try PostgresConnection(conninfo(adding: []))
        defer { writer.close() }
        try writer.query("SET search_path TO \(PostgresSQL.quote(schemaName))")
        // In a table of its own: the locked row cannot be written by another session.
        try writer.query("""
            INSERT INTO swell_hold_holders (source, host, pid, since)
            VALUES ($1::text, $2::text, $3::text, to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'))
            ON CONFLICT (source) DO UPDATE SET host = excluded.host, pid = excluded.pid, since = excluded.since
            """, [.text(source), .text(ProcessInfo.processInfo.hostName), .text(String(getpid()))])
    }

    /// The holder the row names, when its row is locked now.
    private func tableHolder(of source: String) throws(PostgresError) -> SourceHolder? {
        let probe = try PostgresConnection(conninfo(adding: []))
        defer { probe.close() }
        try probe.query("SET search_path TO \(PostgresSQL.quote(schemaName))")
        try probe.query("BEGIN")
        // The probe only read; its connection closes right after.
        defer { _ = try? probe.query("ROLLBACK") }
        // SKIP LOCKED returns the row only when nobody holds it.
        let free = try probe.query("SELECT 1 FROM swell_holds WHERE source = $1::text FOR UPDATE SKIP LOCKED", [.text(source)])
        guard free.isEmpty else { return nil }
        let rows = try probe.query("SELECT host, pid, since FROM swell_hold_holders WHERE source = $1::text", [.text(source)])
        guard let row = rows.first, case .text(let host) = row[0], case .text(let pid) = row[1], case .text(let since) = row[2] else {
            return SourceHolder(host: "unknown", pid: "unknown", since: "unknown")
        }
        return SourceHolder(host: host, pid: pid, since: since)
    }

    /// The sources held now, by whom (for `swell status`), among `sources`.
    public func holders(of sources: [String]) throws -> [(source: String, holder: SourceHolder)] {
        if holdsInTable {
            var result: [(source: String, holder: SourceHolder)] = []
            for source in sources {
                do {
                    if let holder = try tableHolder(of: source) { result.append((source, holder)) }
                } catch {
                    throw StoreError(error)
                }
            }
            return result
        }
        let connection: PostgresConnection
        do {
            connection = try PostgresConnection(conninfo(adding: []))
        } catch {
            throw StoreError(error)
        }
        defer { connection.close() }
        var result: [(source: String, holder: SourceHolder)] = []
        for source in sources {
            do {
                if let holder = try Self.holder(of: source, schema: schemaName, on: connection) { result.append((source, holder)) }
            } catch {
                throw StoreError(error)
            }
        }
        return result
    }

    /// The session holding `source`'s lock, from `pg_locks` and `pg_stat_activity`.
    static func holder(of source: String, schema: String, on connection: PostgresConnection) throws(PostgresError) -> SourceHolder? {
        let rows = try connection.query("""
            SELECT a.application_name::text, a.pid::bigint, to_char(a.backend_start AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
            FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
            WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
              AND l.classid = hashtext($1::text)::oid AND l.objid = hashtext($2::text)::oid
            """, [.text("swell:\(schema)"), .text(source)])
        guard let row = rows.first, case .text(let name) = row[0], case .text(let since) = row[2] else { return nil }
        // application_name is "swell <host> <pid>"; without it, the server's backend pid.
        let parts = name.split(separator: " ")
        if parts.count == 3, parts[0] == "swell" {
            return SourceHolder(host: String(parts[1]), pid: String(parts[2]), since: since)
        }
        if case .integer(let backend) = row[1] { return SourceHolder(host: "unknown", pid: "backend \(backend)", since: since) }
        return nil
    }
}

/// A held source: its session, closed by `release()` (or when the hold goes) to let go.
public final class PostgresSourceHold: @unchecked Sendable {
    /// `@unchecked Sendable`: `connection` is only closed, under `lock`.
    private let lock = NSLock()
    private var connection: PostgresConnection?

    init(connection: PostgresConnection) {
        self.connection = connection
    }

    public func release() {
        lock.withLock {
            connection?.close()
            connection = nil
        }
    }

    deinit { release() }
}
