import Foundation
import SwellContexts
import SwellLocks

/// Keys of records a source saved, kept beside its position in chunks, one per commit that
/// brought new ones (`swell.position.<source>.keys.<n>`): a resumed `mode: replace` source
/// must know every key its pages brought before the stop to delete exactly what an
/// uninterrupted run deletes, and a resumed `mode: append` source must tell the records it
/// saved itself from keys stored before (README, "Resuming a stopped source").
///
/// A chunk's text is compact: one-integer keys sorted, as runs of consecutive values
/// (`i` + base64 of varints: the gap before each run and its length), so ids that pages
/// bring in order cost a few bytes a batch; one-string keys sorted and front-coded (`t` +
/// base64); other keys as JSON (`j`).
struct KeyChunk: Sendable, Equatable {
    var integers: [Int64] = []
    var texts: [String] = []
    var others: [[StoreValue]] = []

    var isEmpty: Bool { integers.isEmpty && texts.isEmpty && others.isEmpty }

    /// Adds keys (values of the key attributes, in key order).
    mutating func add(_ keys: [[StoreValue]]) {
        for key in keys {
            switch (key.count, key.first) {
            case (1, .integer(let value)?): integers.append(value)
            case (1, .text(let text)?): texts.append(text)
            default: others.append(key)
            }
        }
    }

    // MARK: Text

    /// The chunk as the store keeps it: one line per kind present.
    var text: String {
        var lines: [String] = []
        if !integers.isEmpty { lines.append("i" + Self.encodeIntegers(integers)) }
        if !texts.isEmpty { lines.append("t" + Self.encodeTexts(texts)) }
        if !others.isEmpty {
            let values = others.map { $0.map(KeyValue.init) }
            // `KeyValue`s are strings, numbers and booleans, which always encode: no error to lose.
            lines.append("j" + String(decoding: (try? JSONEncoder().encode(values)) ?? Data("[]".utf8), as: UTF8.self))
        }
        return lines.joined(separator: "\n")
    }

    /// The chunk `text` keeps; nil when it is not one.
    init?(text: String) {
        for line in text.split(separator: "\n") {
            let body = String(line.dropFirst())
            switch line.first {
            case "i": guard let decoded = Self.decodeIntegers(body) else { return nil }; integers += decoded
            case "t": guard let decoded = Self.decodeTexts(body) else { return nil }; texts += decoded
            case "j":
                // A chunk that does not read is not this version's: nil, and the caller drops the position (a fresh start, never wrong rows).
                guard let values = try? JSONDecoder().decode([[KeyValue]].self, from: Data(body.utf8)) else { return nil }
                others += values.map { $0.map(\.storeValue) }
            default: return nil
            }
        }
    }

    init() {}

    private static func encodeIntegers(_ values: [Int64]) -> String {
        // Pages mostly bring keys in order: sorted only when they are not.
        var sorted = values
        if zip(sorted, sorted.dropFirst()).contains(where: { $0 > $1 }) { sorted.sort() }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(sorted.count / 4 + 16)
        var index = 0
        var previous: Int64?
        while index < sorted.count {
            let start = sorted[index]
            var end = index
            // A run of consecutive values (a key seen twice stays in its run).
            while end + 1 < sorted.count, sorted[end + 1] == sorted[end] || sorted[end + 1] == sorted[end] &+ 1 { end += 1 }
            // The first run's start as zigzag; then each run's gap after the previous one's end.
            if let previous {
                varint(UInt64(bitPattern: start) &- UInt64(bitPattern: previous) &- 1, into: &bytes)
            } else {
                varint(UInt64(bitPattern: (start << 1) ^ (start >> 63)), into: &bytes)
            }
            varint(UInt64(bitPattern: sorted[end] &- start), into: &bytes)
            previous = sorted[end]
            index = end + 1
        }
        return Data(bytes).base64EncodedString()
    }

    private static func decodeIntegers(_ text: String) -> [Int64]? {
        guard let data = Data(base64Encoded: text) else { return nil }
        let bytes = [UInt8](data)
        var offset = 0
        var values: [Int64] = []
        var previous: Int64?
        while offset < bytes.count {
            // A run longer than any chunk holds is not one this code wrote.
            guard let first = readVarint(bytes, &offset), let length = readVarint(bytes, &offset), length < 1 << 31 else { return nil }
            var value: Int64
            if let previous {
                value = Int64(bitPattern: UInt64(bitPattern: previous) &+ first &+ 1)
            } else {
                value = Int64(bitPattern: first >> 1) ^ -Int64(bitPattern: first & 1)
            }
            for n in 0...length {
                values.append(value)
                if n < length { value &+= 1 }
            }
            previous = value
        }
        return values
    }

    private static func encodeTexts(_ texts: [String]) -> String {
        let sorted = Array(Set(texts)).map { Array($0.utf8) }.sorted { $0.lexicographicallyPrecedes($1) }
        var bytes: [UInt8] = []
        var previous: [UInt8] = []
        for text in sorted {
            var shared = 0
            while shared < min(previous.count, text.count), previous[shared] == text[shared] { shared += 1 }
            varint(UInt64(shared), into: &bytes)
            varint(UInt64(text.count - shared), into: &bytes)
            bytes += text[shared...]
            previous = text
        }
        return Data(bytes).base64EncodedString()
    }

    private static func decodeTexts(_ text: String) -> [String]? {
        guard let data = Data(base64Encoded: text) else { return nil }
        let bytes = [UInt8](data)
        var offset = 0
        var texts: [String] = []
        var previous: [UInt8] = []
        while offset < bytes.count {
            guard let shared = readVarint(bytes, &offset).map(Int.init), let length = readVarint(bytes, &offset).map(Int.init),
                  shared <= previous.count, length <= bytes.count - offset else { return nil }
            let current = Array(previous[..<shared]) + bytes[offset..<(offset + length)]
            offset += length
            texts.append(String(decoding: current, as: UTF8.self))
            previous = current
        }
        return texts
    }

    private static func varint(_ value: UInt64, into bytes: inout [UInt8]) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(value & 0x7F) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    private static func readVarint(_ bytes: [UInt8], _ offset: inout Int) -> UInt64? {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while offset < bytes.count, shift < 64 {
            let byte = bytes[offset]
            offset += 1
            value |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return value }
            shift += 7
        }
        return nil
    }
}

/// A key's value in a chunk's JSON.
private enum KeyValue: Codable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)

    init(_ value: StoreValue) {
        switch value {
        case .null: self = .null
        case .integer(let int): self = .integer(int)
        case .real(let double): self = .real(double)
        case .text(let text): self = .text(text)
        }
    }

    var storeValue: StoreValue {
        switch self {
        case .null: .null
        case .integer(let int): .integer(int)
        case .real(let double): .real(double)
        case .text(let text): .text(text)
        }
    }
}

/// The keys a source's batches brought since its last chunk was kept: the stages that see
/// keys (sinks, workers, the replace sweeper) add them; each commit that keeps a position
/// takes them as its chunk.
///
/// `Sendable`: its chunk is behind a `LockedValue`.
final class KeyChunkCollector: Sendable {
    private let pending = LockedValue(KeyChunk())

    /// Keys seen (values of the key attributes, in key order).
    func add(_ keys: [[StoreValue]]) {
        guard !keys.isEmpty else { return }
        pending.withLock { $0.add(keys) }
    }

    /// One-integer keys seen.
    func add(integers: [Int64]) {
        guard !integers.isEmpty else { return }
        pending.withLock { $0.integers += integers }
    }

    /// The keys added since the last call, as one chunk.
    func take() -> KeyChunk {
        pending.withLock { chunk in
            defer { chunk = KeyChunk() }
            return chunk
        }
    }
}

/// The keys an earlier run of a `mode: append` source saved (its kept chunks), looked up by a
/// resumed run: a record of a page it fetches again whose key is stored and among these was
/// saved by that run, not before it, and is left as it is rather than refused as a key that
/// exists already.
struct SavedKeys: Sendable {
    private let integers: [Int64]
    private var texts = SeenTexts()
    private let others: Set<[StoreValue]>

    init(_ chunks: [KeyChunk]) {
        integers = chunks.flatMap(\.integers).sorted()
        for chunk in chunks { for text in chunk.texts { texts.append(text) } }
        texts.sort()
        others = Set(chunks.flatMap(\.others))
    }

    /// Whether `key` (values of the key attributes, in key order) was saved by the earlier run.
    func contains(_ key: [StoreValue]) -> Bool {
        switch (key.count, key.first) {
        case (1, .integer(let value)?):
            var low = 0, high = integers.count
            while low < high {
                let middle = (low + high) / 2
                if integers[middle] < value { low = middle + 1 } else { high = middle }
            }
            return low < integers.count && integers[low] == value
        case (1, .text(let text)?):
            return texts.contains(text)
        default:
            return others.contains(key)
        }
    }
}
