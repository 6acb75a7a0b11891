import CLibPQ
import Foundation
import SwellLibcrypto
import SwellStoreCore

/// Where a PostgreSQL store lives, as messages may name it: host, port,
/// database and user — never the password.
public struct PostgresEndpoint: Sendable, Hashable, CustomStringConvertible {
    public var host: String
    public var port: String
    public var database: String
    public var user: String

    public var description: String { "\(user)@\(host):\(port)/\(database)" }
}

/// Why talking to PostgreSQL failed; messages name the endpoint, never a password.
public enum PostgresError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The server could not be reached, or refused the login.
    case connectionFailed(PostgresEndpoint, reason: String)
    /// A statement failed: its SQLSTATE and the server's message.
    case statementFailed(sqlState: String, message: String, sql: String)
    /// The connection was lost (or closed) before or during a statement.
    case connectionLost(PostgresEndpoint, reason: String)
    /// The server's answer could not be used: a result the client cannot read (malformed
    /// binary COPY data, a column type with no binary reader), or a failure without a SQLSTATE.
    case unreadableAnswer(message: String, sql: String)

    /// The SQLSTATE of a refused statement, nil for a connection failure.
    public var sqlState: String? {
        if case .statementFailed(let state, _, _) = self { return state }
        return nil
    }

    public var description: String {
        switch self {
        case .connectionFailed(let endpoint, let reason): "cannot connect to PostgreSQL at \(endpoint): \(reason)"
        case .statementFailed(let state, let message, let sql): "PostgreSQL refused a statement (SQLSTATE \(state)): \(message) — in: \(sql)"
        case .connectionLost(let endpoint, let reason): "the connection to PostgreSQL at \(endpoint) was lost: \(reason)"
        case .unreadableAnswer(let message, let sql): "PostgreSQL's answer could not be used: \(message) — in: \(sql)"
        }
    }
}

/// One libpq connection (`PGconn`): connect by URL or keywords (libpq's own
/// environment — `PGHOST`, `PGPASSWORD`, `.pgpass`, service files — applies),
/// run statements with parameters, close on purpose.
///
/// A connection is used from one serial queue at a time, as the SQLite store's
/// connections are; it is not `Sendable`.
public final class PostgresConnection {
    private var handle: OpaquePointer?
    /// Where it is connected.
    public let endpoint: PostgresEndpoint

    /// Connects with a `postgres://` / `postgresql://` URL or a keyword string.
    ///
    /// - Throws: `PostgresError.connectionFailed` naming host, port, database and user.
    public init(_ conninfo: String) throws(PostgresError) {
        // libpq starts libcrypto for TLS: first without its exit handler (`LibcryptoLifetime`).
        LibcryptoLifetime.keepUntilExit()
        let connection = PQconnectdb(conninfo)
        endpoint = Self.endpoint(of: connection)
        guard let connection, PQstatus(connection) == CONNECTION_OK else {
            let reason = Self.message(connection)
            PQfinish(connection)
            throw .connectionFailed(endpoint, reason: reason)
        }
        // The server's notices ("relation … already exists, skipping") would go to stderr: not for users.
        PQsetNoticeProcessor(connection, { _, _ in }, nil)
        handle = connection
    }

    deinit {
        if let handle { PQfinish(handle) }
    }

    /// Closes the connection (nothing happens the second time).
    public func close() {
        if let handle { PQfinish(handle) }
        handle = nil
    }

    /// Whether the connection is open and healthy.
    public var isOpen: Bool {
        guard let handle else { return false }
        return PQstatus(handle) == CONNECTION_OK
    }

    /// PostgreSQL's text cannot hold NUL: the error the server gives for one (SQLSTATE 22021,
    /// character_not_in_repertoire), raised before a value is sent or copied.
    static func nulInText(sql: String) -> PostgresError {
        .statementFailed(sqlState: "22021", message: "a text value contains a NUL character, which PostgreSQL cannot store", sql: sql)
    }

    /// Runs `sql` with `$1…` parameters (sent as text); returns the rows, each value typed
    /// by its column: integers, doubles, booleans (0/1) as the store keeps them, the rest as text.
    /// With `binaryResults`, the server sends values in their binary form (no number or date
    /// text to parse): every column must then be of a type `PostgresBinaryCopyDecoder` reads
    /// (a `timestamptz` becomes Unix seconds), or the call throws.
    @discardableResult
    public func query(_ sql: String, _ parameters: [StoreValue] = [], binaryResults: Bool = false) throws(PostgresError) -> [[StoreValue]] {
        guard let handle else { throw .connectionLost(endpoint, reason: "the connection was closed") }
        for case .text(let text) in parameters where text.utf8.contains(0) {
            // libpq passes parameters as C strings: refused, never cut short.
            throw Self.nulInText(sql: sql)
        }
        let texts: [String?] = parameters.map(Self.text)
        let result: OpaquePointer? = Self.withCStrings(texts) { pointers in
            PQexecParams(handle, sql, Int32(pointers.count), nil, pointers, nil, nil, binaryResults ? 1 : 0)
        }
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        guard status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK else { throw failure(result, handle: handle, sql: sql) }
        let rows = Int(PQntuples(result)), columns = Int(PQnfields(result))
        var output: [[StoreValue]] = []
        output.reserveCapacity(rows)
        if binaryResults {
            var kinds: [PostgresBinaryCopyDecoder.ColumnKind] = []
            for column in 0..<Int32(columns) {
                guard let kind = PostgresBinaryCopyDecoder.kind(ofType: PQftype(result, column)) else {
                    throw .unreadableAnswer(message: "a result column of type \(PQftype(result, column)) cannot be read in binary", sql: sql)
                }
                kinds.append(kind)
            }
            for row in 0..<Int32(rows) {
                var values: [StoreValue] = []
                values.reserveCapacity(columns)
                for (column, kind) in kinds.enumerated() {
                    values.append(try Self.binaryValue(result, row: row, column: Int32(column), kind: kind))
                }
                output.append(values)
            }
            return output
        }
        for row in 0..<rows {
            output.append((0..<columns).map { column in Self.value(result, row: Int32(row), column: Int32(column)) })
        }
        return output
    }

    /// Runs a query whose answer comes in binary form and hands `body` each row's fields, read
    /// in place from libpq's result (valid only during the call): no `StoreValue`s or `String`s
    /// made. Every column must be of a type `PostgresBinaryCopyDecoder` reads.
    package func forEachBinaryRow(_ sql: String, _ parameters: [StoreValue] = [],
                                 _ body: (_ field: (Int) throws(PostgresError) -> StoreRowCursor.Field) throws -> Void) throws {
        guard let handle else { throw PostgresError.connectionLost(endpoint, reason: "the connection was closed") }
        for case .text(let text) in parameters where text.utf8.contains(0) { throw Self.nulInText(sql: sql) }
        let texts: [String?] = parameters.map(Self.text)
        let result: OpaquePointer? = Self.withCStrings(texts) { pointers in
            PQexecParams(handle, sql, Int32(pointers.count), nil, pointers, nil, nil, 1)
        }
        defer { PQclear(result) }
        guard PQresultStatus(result) == PGRES_TUPLES_OK else { throw failure(result, handle: handle, sql: sql) }
        var kinds: [PostgresBinaryCopyDecoder.ColumnKind] = []
        for column in 0..<PQnfields(result) {
            guard let kind = PostgresBinaryCopyDecoder.kind(ofType: PQftype(result, column)) else {
                throw PostgresError.unreadableAnswer(message: "a result column of type \(PQftype(result, column)) cannot be read in binary", sql: sql)
            }
            kinds.append(kind)
        }
        for row in 0..<PQntuples(result) {
            try body { (column: Int) throws(PostgresError) -> StoreRowCursor.Field in
                let index = Int32(column)
                guard PQgetisnull(result, row, index) == 0, let raw = PQgetvalue(result, row, index) else { return .null }
                let length = Int(PQgetlength(result, row, index))
                return try PostgresBinaryCopyDecoder.field(kinds[column], UnsafeRawBufferPointer(start: raw, count: length), at: 0, length: length)
            }
        }
    }

    private static func binaryValue(_ result: OpaquePointer?, row: Int32, column: Int32,
                                    kind: PostgresBinaryCopyDecoder.ColumnKind) throws(PostgresError) -> StoreValue {
        guard PQgetisnull(result, row, column) == 0, let raw = PQgetvalue(result, row, column) else { return .null }
        let bytes = UnsafeRawBufferPointer(start: raw, count: Int(PQgetlength(result, row, column)))
        switch try PostgresBinaryCopyDecoder.field(kind, bytes, at: 0, length: bytes.count) {
        case .null: return .null
        case .integer(let int): return .integer(int)
        case .real(let double): return .real(double)
        case .text(let text): return .text(String(decoding: text, as: UTF8.self))
        }
    }

    /// Runs `COPY … FROM STDIN` (`sql`) and sends `data` (COPY's text format) as its rows.
    public func copyIn(_ sql: String, _ data: [UInt8]) throws(PostgresError) {
        guard let handle else { throw .connectionLost(endpoint, reason: "the connection was closed") }
        let started = PQexec(handle, sql)
        defer { PQclear(started) }
        guard PQresultStatus(started) == PGRES_COPY_IN else { throw failure(started, handle: handle, sql: sql) }
        var offset = 0
        var sendFailed = false
        while offset < data.count && !sendFailed {
            let length = min(1 << 20, data.count - offset)
            let sent = data.withUnsafeBufferPointer { buffer in
                buffer.baseAddress!.advanced(by: offset).withMemoryRebound(to: CChar.self, capacity: length) {
                    PQputCopyData(handle, $0, Int32(length))
                }
            }
            sendFailed = sent != 1
            offset += length
        }
        PQputCopyEnd(handle, sendFailed ? "the client could not send the rows" : nil)
        var copyFailure: PostgresError?
        while let result = PQgetResult(handle) {
            if PQresultStatus(result) != PGRES_COMMAND_OK && copyFailure == nil { copyFailure = failure(result, handle: handle, sql: sql) }
            PQclear(result)
        }
        if let copyFailure { throw copyFailure }
    }

    /// The type OIDs of the columns `sql` (a SELECT without parameters) returns; no row is read.
    public func columnTypes(of sql: String) throws(PostgresError) -> [UInt32] {
        guard let handle else { throw .connectionLost(endpoint, reason: "the connection was closed") }
        let result = PQexec(handle, "SELECT * FROM (\(sql)) AS swell_columns LIMIT 0")
        defer { PQclear(result) }
        guard PQresultStatus(result) == PGRES_TUPLES_OK else { throw failure(result, handle: handle, sql: sql) }
        return (0..<PQnfields(result)).map { PQftype(result, $0) }
    }

    /// Runs `COPY … TO STDOUT` (`sql`) and hands `body` the data as the server sends it, one
    /// message at a time (valid only inside `body`). If `body` throws, the COPY is cancelled and
    /// the connection drained, so it stays usable, and the error is rethrown.
    public func copyOut(_ sql: String, _ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        guard let handle else { throw PostgresError.connectionLost(endpoint, reason: "the connection was closed") }
        let started = PQexec(handle, sql)
        defer { PQclear(started) }
        guard PQresultStatus(started) == PGRES_COPY_OUT else { throw failure(started, handle: handle, sql: sql) }
        var bodyError: (any Error)?
        while true {
            var buffer: UnsafeMutablePointer<CChar>?
            let length = PQgetCopyData(handle, &buffer, 0)
            guard length > 0, let buffer else { break }
            defer { PQfreemem(buffer) }
            guard bodyError == nil else { continue }
            do {
                try body(UnsafeRawBufferPointer(start: buffer, count: Int(length)))
            } catch {
                bodyError = error
                if let cancel = PQgetCancel(handle) {
                    var message = [CChar](repeating: 0, count: 256)
                    _ = PQcancel(cancel, &message, Int32(message.count))
                    PQfreeCancel(cancel)
                }
            }
        }
        var copyFailure: PostgresError?
        while let result = PQgetResult(handle) {
            if PQresultStatus(result) != PGRES_COMMAND_OK && copyFailure == nil { copyFailure = failure(result, handle: handle, sql: sql) }
            PQclear(result)
        }
        if let bodyError { throw bodyError }
        if let copyFailure { throw copyFailure }
    }

    /// The error a failed result stands for: the connection lost, or the statement refused.
    private func failure(_ result: OpaquePointer?, handle: OpaquePointer, sql: String) -> PostgresError {
        if PQstatus(handle) != CONNECTION_OK { return .connectionLost(endpoint, reason: Self.message(handle)) }
        let message = PQresultErrorField(result, Int32(UInt8(ascii: "M"))).map { String(cString: $0) } ?? Self.message(handle)
        guard let state = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map({ String(cString: $0) }) else {
            return .unreadableAnswer(message: message, sql: sql)    // libpq's own failure: no SQLSTATE
        }
        return .statementFailed(sqlState: state, message: message, sql: sql)
    }

    /// Appends `value` to `buffer` as a field of COPY's text format (`\N` for nil).
    public static func appendCopyField(_ value: StoreValue, to buffer: inout [UInt8]) {
        switch value {
        case .null: buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "N")])
        case .integer(let int): buffer.append(contentsOf: String(int).utf8)
        case .real(let double): buffer.append(contentsOf: "\(double)".utf8)
        case .text(let text):
            for byte in text.utf8 {
                switch byte {
                case UInt8(ascii: "\\"): buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
                case UInt8(ascii: "\n"): buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
                case UInt8(ascii: "\r"): buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
                case UInt8(ascii: "\t"): buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
                default: buffer.append(byte)
                }
            }
        }
    }

    // MARK: Helpers

    private static func value(_ result: OpaquePointer?, row: Int32, column: Int32) -> StoreValue {
        guard PQgetisnull(result, row, column) == 0, let raw = PQgetvalue(result, row, column) else { return .null }
        let text = String(cString: raw)
        switch PQftype(result, column) {
        case 20, 21, 23: return Int64(text).map(StoreValue.integer) ?? .text(text)          // int8, int2, int4
        case 700, 701: return Double(text).map(StoreValue.real) ?? .text(text)               // float4, float8
        case 16: return .integer(text == "t" ? 1 : 0)                                      // bool
        default: return .text(text)
        }
    }

    private static func text(_ value: StoreValue) -> String? {
        switch value {
        case .null: nil
        case .integer(let int): String(int)
        case .real(let double): "\(double)"
        case .text(let text): text
        }
    }

    private static func withCStrings<R>(_ strings: [String?], _ body: ([UnsafePointer<CChar>?]) -> R) -> R {
        let owned: [UnsafeMutablePointer<CChar>?] = strings.map { $0.map { strdup($0) } ?? nil }
        defer { for pointer in owned { free(pointer) } }
        return body(owned.map { UnsafePointer($0) })
    }

    /// libpq's last error message for a connection, trimmed.
    private static func message(_ connection: OpaquePointer?) -> String {
        guard let connection, let raw = PQerrorMessage(connection) else { return "out of memory" }
        return String(cString: raw).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private static func endpoint(of connection: OpaquePointer?) -> PostgresEndpoint {
        func field(_ read: (OpaquePointer?) -> UnsafeMutablePointer<CChar>?) -> String {
            guard let connection, let raw = read(connection) else { return "?" }
            return String(cString: raw)
        }
        return PostgresEndpoint(host: field(PQhost), port: field(PQport), database: field(PQdb), user: field(PQuser))
    }
}

@available(*, unavailable, message: "a PostgreSQL connection is used from one queue at a time")
extension PostgresConnection: Sendable {}
