import Foundation
import SwellContexts

/// Where a source that stopped stands (README, "Resuming a stopped source"): kept in the
/// store's metadata under `swell.position.<source>` by each saved batch, in that batch's own
/// transaction, and removed by the source's last save when it completes.
///
/// `pagesSaved` pages are on disk whole; `next` rebuilds the request of the first page that is
/// not (nil: every page is saved, only the source's last save was left). `fingerprint` says
/// which requests the position belongs to (`SourceFingerprint`): a change in the file drops it.
/// `keyChunks` chunks of keys saved so far are kept beside it (`PositionKeys`) for a source in
/// `mode: replace` or `append`; `cursor` is the largest incremental cursor value seen. A
/// `for_each` item that completed while its `for_each` had not is kept as `done`.
///
/// Its text never holds a secret: a URL or cursor from a page is kept with each secret of the
/// file replaced by the `${VAR}` it came from (`SecretTemplate`).
struct SourcePosition: Codable, Equatable, Sendable {
    /// The form of this text: a position of another form reads as none.
    var form = 1
    var fingerprint: String
    /// Pages saved whole, counted from the source's first page (`resumed_from` of the run that resumes).
    var pagesSaved = 0
    /// The request of page `pagesSaved`; nil when there is none (every page saved).
    var next: PagingState?
    /// Key chunks kept beside the position (`swell.position.<source>.keys.<n>`, n from 0).
    var keyChunks = 0
    /// The largest incremental cursor value the saved pages brought.
    var cursor: CursorValue?
    /// A `for_each` item that completed (its `for_each` has items left).
    var done = false

    enum CodingKeys: String, CodingKey {
        case form, fingerprint, next, cursor, done
        case pagesSaved = "pages_saved"
        case keyChunks = "key_chunks"
    }

    /// The metadata key of source `source`'s position.
    static func metadataKey(source: String) -> String { "swell.position.\(source)" }

    /// The metadata key of source `source`'s key chunk `number`.
    static func keyChunkKey(source: String, number: Int) -> String { "swell.position.\(source).keys.\(number)" }

    /// The position kept in `text`; nil for text of another form (written by another version).
    static func decode(_ text: String) -> SourcePosition? {
        guard let position = try? JSONDecoder().decode(SourcePosition.self, from: Data(text.utf8)), position.form == 1 else { return nil }
        return position
    }

    /// The position as the store keeps it.
    var text: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Strings, integers and booleans always encode.
        return String(decoding: (try? encoder.encode(self)) ?? Data(), as: UTF8.self)
    }

    /// What removes this position and its key chunks from the store.
    func removal(source: String) -> [String: String?] {
        var metadata: [String: String?] = [Self.metadataKey(source: source): nil]
        for number in 0..<keyChunks { metadata[Self.keyChunkKey(source: source, number: number)] = .some(nil) }
        return metadata
    }
}

/// What rebuilds a page's request (`Paginator.resuming(at:)`): the first page's, a page
/// number, an offset, a cursor from the page before, or a next link's URL. Cursor and URL
/// are kept as `SecretTemplate` text.
enum PagingState: Codable, Equatable, Sendable {
    case first
    case page(Int)
    case offset(Int)
    case cursor(String)
    case url(String)

    private enum CodingKeys: String, CodingKey { case first, page, offset, cursor, url }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        if let page = try container.decodeIfPresent(Int.self, forKey: .page) {
            self = .page(page)
        } else if let offset = try container.decodeIfPresent(Int.self, forKey: .offset) {
            self = .offset(offset)
        } else if let cursor = try container.decodeIfPresent(String.self, forKey: .cursor) {
            self = .cursor(cursor)
        } else if let url = try container.decodeIfPresent(String.self, forKey: .url) {
            self = .url(url)
        } else {
            _ = try container.decode(Bool.self, forKey: .first)
            self = .first
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .first: try container.encode(true, forKey: .first)
        case .page(let page): try container.encode(page, forKey: .page)
        case .offset(let offset): try container.encode(offset, forKey: .offset)
        case .cursor(let cursor): try container.encode(cursor, forKey: .cursor)
        case .url(let url): try container.encode(url, forKey: .url)
        }
    }

    /// How `swell status` shows the request (templates shown with their `${VAR}`s).
    var shown: String {
        switch self {
        case .first: "the first page"
        case .page(let page): "page \(page)"
        case .offset(let offset): "offset \(offset)"
        case .cursor(let cursor): "cursor \(cursor)"
        case .url(let url): url
        }
    }
}

/// An incremental cursor value as a position keeps it (the store's value kinds).
enum CursorValue: Codable, Equatable, Sendable {
    case integer(Int64)
    case real(Double)
    case text(String)

    init?(_ value: StoreValue?) {
        switch value {
        case .integer(let int)?: self = .integer(int)
        case .real(let double)?: self = .real(double)
        case .text(let text)?: self = .text(text)
        case .null?, nil: return nil
        }
    }

    var storeValue: StoreValue {
        switch self {
        case .integer(let int): .integer(int)
        case .real(let double): .real(double)
        case .text(let text): .text(text)
        }
    }
}
