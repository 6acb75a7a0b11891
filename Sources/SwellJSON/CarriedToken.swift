/// The token that a chunk of a page ended in, kept as bytes until the chunk
/// that finishes it arrives (the page readers' only copy of their input).
///
/// The parsers stop at the first byte of a token that their buffer does not
/// hold whole; the reader starts a carried token there, extends it from the
/// next chunk up to the token's end (with one byte of what follows a number or
/// literal, so that the parser sees where it ends), and parses it on its own
/// before going on with the rest of that chunk.
struct CarriedToken: Sendable {
    private enum Kind: Sendable { case string, number, literal }

    /// The token's bytes so far, from its first byte.
    private(set) var bytes: [UInt8] = []
    /// The page offset of `bytes[0]`.
    private(set) var base = 0
    private var kind: Kind = .literal
    /// In a string: whether its last byte is an unconsumed backslash.
    private var escaped = false

    /// Whether no token is carried.
    var isEmpty: Bool { bytes.isEmpty }

    /// Starts carrying the unfinished token `bytes`, whose first byte is at page offset `base`.
    mutating func start(_ bytes: UnsafeRawBufferPointer, base: Int) {
        self.bytes.append(contentsOf: bytes)
        self.base = base
        switch bytes.first ?? 0 {
        case UInt8(ascii: "\""):
            kind = .string
            escaped = false
            followEscapes(UnsafeRawBufferPointer(rebasing: bytes[1...]))
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            kind = .number
        default:
            kind = .literal
        }
    }

    /// Appends the bytes of `chunk` that finish the token; returns how many it
    /// took, and whether the token is now complete (else it took them all).
    mutating func extend(from chunk: UnsafeRawBufferPointer) -> (taken: Int, complete: Bool) {
        let (taken, complete) = end(in: chunk)
        let part = UnsafeRawBufferPointer(rebasing: chunk[0..<taken])
        bytes.append(contentsOf: part)
        if !complete {
            followEscapes(part)
        }
        return (taken, complete)
    }

    /// Hands the carried bytes over to be parsed; the token is then empty.
    ///
    /// Give the array back with `recycle` once parsed, so that its storage is reused.
    mutating func take() -> [UInt8] {
        var taken: [UInt8] = []
        swap(&taken, &bytes)
        return taken
    }

    /// Takes back an array handed out by `take`, emptied, to reuse its storage
    /// (unless it grew beyond 64 KiB for one huge token).
    mutating func recycle(_ buffer: inout [UInt8]) {
        guard bytes.isEmpty, buffer.capacity <= 1 << 16 else { return }
        buffer.removeAll(keepingCapacity: true)
        swap(&buffer, &bytes)
    }

    /// Follows backslashes through newly carried string bytes.
    private mutating func followEscapes(_ part: UnsafeRawBufferPointer) {
        guard kind == .string else { return }
        for byte in part {
            if escaped {
                escaped = false
            } else if byte == UInt8(ascii: "\\") {
                escaped = true
            }
        }
    }

    /// How many bytes of the chunk finish the token (with one byte of what
    /// follows a number or literal, so that the parser sees its end), and
    /// whether the token ends in this chunk at all.
    private func end(in chunk: UnsafeRawBufferPointer) -> (count: Int, complete: Bool) {
        switch kind {
        case .string:
            var escaped = escaped
            for (index, byte) in chunk.enumerated() {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    return (index + 1, true)
                }
            }
        case .number:
            for (index, byte) in chunk.enumerated() {
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "+"),
                    UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"):
                    continue
                default:
                    return (index + 1, true)
                }
            }
        case .literal:
            for (index, byte) in chunk.enumerated() where !(UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) {
                return (index + 1, true)
            }
        }
        return (chunk.count, false)
    }
}
