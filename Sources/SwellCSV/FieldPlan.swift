/// The bytes the CSV quoting rule looks at.
enum ASCII {
    static let comma = UInt8(ascii: ",")
    static let quote = UInt8(ascii: "\"")
    static let lineFeed = UInt8(ascii: "\n")
    static let carriageReturn = UInt8(ascii: "\r")
    static let apostrophe = UInt8(ascii: "'")
}

/// How one field is written: whether it is quoted, how many quotes double, whether it gets a `'`.
struct FieldPlan {
    var quoted = false
    var quotes = 0
    var formulaPrefix = false
    var byteCount = 0

    /// Scans the field's UTF-8 bytes once.
    init(scanning bytes: UnsafeBufferPointer<UInt8>, escapeFormulas: Bool) {
        byteCount = bytes.count
        if escapeFormulas, let first = bytes.first {
            formulaPrefix = first == UInt8(ascii: "=") || first == UInt8(ascii: "+")
                || first == UInt8(ascii: "-") || first == UInt8(ascii: "@")
        }
        guard let base = bytes.baseAddress else { return }
        // Eight bytes at a time: a word without a quote, comma, CR or LF is skipped whole
        // (the common case); one with any goes through the byte loop.
        var index = 0
        let raw = UnsafeRawPointer(base)
        while index &+ 8 <= bytes.count {
            if FieldPlan.holdsSpecialByte(raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)) {
                note(UnsafeBufferPointer(rebasing: bytes[index..<index &+ 8]))
            }
            index &+= 8
        }
        note(UnsafeBufferPointer(rebasing: bytes[index...]))
    }

    /// Whether any byte of `word` is a quote, comma, line feed or carriage return.
    @inline(__always)
    private static func holdsSpecialByte(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        let quotes = word ^ (ones &* UInt64(ASCII.quote))
        let commas = word ^ (ones &* UInt64(ASCII.comma))
        let lineFeeds = word ^ (ones &* UInt64(ASCII.lineFeed))
        let returns = word ^ (ones &* UInt64(ASCII.carriageReturn))
        // A byte of x is zero where (x - 1) & ~x has its high bit (flags above one may be false, which only costs the byte loop).
        let zeros = ((quotes &- ones) & ~quotes) | ((commas &- ones) & ~commas)
            | ((lineFeeds &- ones) & ~lineFeeds) | ((returns &- ones) & ~returns)
        return zeros & highs != 0
    }

    /// Counts the quotes of `bytes` and notes whether they need quoting.
    @inline(__always)
    private mutating func note(_ bytes: UnsafeBufferPointer<UInt8>) {
        for byte in bytes where byte <= ASCII.comma {
            switch byte {
            case ASCII.quote:
                quoted = true
                quotes += 1
            case ASCII.comma, ASCII.lineFeed, ASCII.carriageReturn:
                quoted = true
            default:
                break
            }
        }
    }

    /// Bytes the field takes in the file.
    var length: Int {
        byteCount + (formulaPrefix ? 1 : 0) + (quoted ? 2 + quotes : 0)
    }

    /// Writes the field (`length` bytes) at `target`.
    func encode(_ bytes: UnsafeBufferPointer<UInt8>, into target: UnsafeMutablePointer<UInt8>) {
        var position = target
        if quoted {
            position.pointee = ASCII.quote
            position += 1
        }
        if formulaPrefix {
            position.pointee = ASCII.apostrophe
            position += 1
        }
        if quotes == 0 {
            if let base = bytes.baseAddress {
                position.update(from: base, count: bytes.count)
                position += bytes.count
            }
        } else {
            for byte in bytes {
                position.pointee = byte
                position += 1
                if byte == ASCII.quote {
                    position.pointee = ASCII.quote
                    position += 1
                }
            }
        }
        if quoted {
            position.pointee = ASCII.quote
        }
    }
}
