/// One cell: text is subject to formula escaping; a value is already formatted (numbers, dates, booleans) and never escaped.
///
/// Both kinds follow the quoting rule; `.null` and `.text("")` both give an empty field.
public enum CSVCell: Sendable, Equatable {
    /// No value: an empty field.
    case null
    /// A string from the data; gets a leading `'` when formula escaping is on and it starts with = + - @.
    case text(String)
    /// A formatted number, date or boolean (see `CSVFormat`); written as is.
    case value(String)
}
