import SwellCSV
import SwellCalendar
import SwellHTTP
import SwellContexts

/// Incremental sync (Pipeline file reference, `incremental`): the largest value of the
/// cursor attribute a complete run saw is kept in the store's metadata under
/// `incremental.<source>`, as the text the next run sends in its query parameter. While
/// none is kept, the `initial` value is sent (if given); a kept value is sent `lag`
/// seconds earlier (if given), so that records changed just before the last run's newest
/// are read again.
struct IncrementalCursor: Sendable {
    /// The query parameter that carries the stored value.
    let parameter: String
    /// The cursor attribute's index in the entity.
    let attributeIndex: Int
    let type: AttributeType
    let metadataKey: String
    let initial: String?
    let lag: Double?

    /// The source's cursor; nil when it is not incremental.
    init?(source: SourceSpec, entity: PipelineEntity) {
        guard let spec = source.incremental,
              let index = entity.attributes.firstIndex(where: { $0.name == spec.cursor }) else { return nil }
        parameter = spec.parameter
        attributeIndex = index
        type = entity.attributes[index].type
        metadataKey = Self.metadataKey(source: source.name)
        initial = spec.initial
        lag = spec.lag
    }

    /// The store metadata key of source `source`'s cursor.
    static func metadataKey(source: String) -> String {
        "incremental.\(source)"
    }

    /// The source's URL with the value to send (if any) in the parameter.
    func url(_ sourceURL: String, stored: String?) -> String {
        guard let value = sent(stored: stored) else { return sourceURL }
        return HTTPLinks.setting(query: parameter, to: value, in: sourceURL)
    }

    /// The value sent: the kept one less the lag, or the initial one while none is kept.
    func sent(stored: String?) -> String? {
        guard let stored else { return initial }
        guard let lag, lag > 0 else { return stored }
        switch type {
        case .date:
            guard let seconds = ISODate.seconds(from: stored) else { return stored }
            return ISODate.string(fromSeconds: seconds - lag)
        case .integer:
            guard let value = Int64(stored) else { return stored }
            return String(value - Int64(lag.rounded(.up)))
        default:
            guard let value = Double(stored) else { return stored }
            return CSVFormat.double(value - lag)
        }
    }

    /// The larger of the largest value so far and the cursor of a row's `values` (null is no value).
    func largest(_ current: StoreValue?, _ values: [StoreValue]) -> StoreValue? {
        Self.larger(current, values[attributeIndex])
    }

    /// The larger of two values; nil and null count as none.
    static func larger(_ current: StoreValue?, _ candidate: StoreValue?) -> StoreValue? {
        guard let candidate, !candidate.isNull else { return current }
        guard let current else { return candidate }
        return StoreValue.compare(candidate, current) > 0 ? candidate : current
    }

    /// The text sent in the parameter: ISO-8601 UTC for dates.
    func text(_ value: StoreValue) -> String {
        switch (value, type) {
        case (.real(let seconds), .date): ISODate.string(fromSeconds: seconds)
        case (.integer(let int), .date): ISODate.string(fromSeconds: Double(int))
        case (.integer(let int), .boolean): int != 0 ? "true" : "false"
        case (.integer(let int), _): String(int)
        case (.real(let double), _): CSVFormat.double(double)
        case (.text(let text), _): text
        case (.null, _): ""
        }
    }
}
