/// Keys: matching them against the plan's, fast for the expected one.
extension RecordProjector {
    /// The index of the closing quote when the token at `token` is key
    /// `index` of the plan written as it is; nil otherwise.
    ///
    /// A key without escapes whose bytes equal a plan's key is a whole, valid
    /// string token: the key's bytes are valid UTF-8 without `"`, `\` or
    /// control characters.
    @inline(__always)
    func rawMatch(_ buffer: UnsafeRawBufferPointer, from token: Int, key index: Int) -> Int? {
        let key = plan.keys.baseAddress.unsafelyUnwrapped + index
        let count = key.pointee.count
        let contentStart = token &+ 1
        let close = contentStart &+ count
        guard close < buffer.count, buffer[close] == UInt8(ascii: "\""), key.pointee.isRaw else { return nil }
        if contentStart &+ 8 <= buffer.count {
            guard buffer.loadUnaligned(fromByteOffset: contentStart, as: UInt64.self) & key.pointee.mask == key.pointee.prefix else { return nil }
        } else {
            guard Self.prefix(of: UnsafeRawBufferPointer(rebasing: buffer[contentStart..<close])) == key.pointee.prefix else { return nil }
        }
        if count > 8 {
            let offset = key.pointee.offset
            for index in 8..<count where plan.keyBytes[offset &+ index] != buffer[contentStart &+ index] {
                return nil
            }
        }
        return close
    }

    /// The value after key `index` of the plan belongs to its node, whose
    /// descendants start over (with a later duplicate key, the later value
    /// wins; the node's own slots are all set by the value); the key after it
    /// is expected next.
    @inline(__always)
    mutating func take(key index: Int) {
        let key = plan.keys.baseAddress.unsafelyUnwrapped + index
        pendingNode = key.pointee.node
        var slot = key.pointee.descendantsStart
        let end = key.pointee.descendantsEnd
        while slot < end {
            slots[plan.descendantSlots[slot]].tag = .missing
            slot &+= 1
        }
        table.guesses[keyNode] = key.pointee.next
    }

    /// Reads any key (not the one expected); the index after it, or nil when the buffer ends inside it.
    @inline(never)
    mutating func readKey(
        _ buffer: UnsafeRawBufferPointer, from token: Int, base: Int, isFinal: Bool
    ) throws(JSONError) -> Int? {
        guard let scanned = try scanString(buffer, from: token, base: base) else {
            if isFinal { throw error("unterminated string", at: base + token) }
            return nil
        }
        takeKey(buffer, from: token, scanned)
        return scanned.end
    }

    /// Matches a key in the innermost object: the node its value belongs to (-1: none).
    mutating func takeKey(_ buffer: UnsafeRawBufferPointer, from token: Int, _ scanned: ScannedString) {
        guard let decoded = scanned.decodedStart else {
            // Without escapes, `takeAnyRawKey` has already compared it with every key of the node.
            if emitting > 0 { emitString(buffer, from: token, scanned) }
            return
        }
        if keyNode >= 0 {
            let found = strings.withUnsafeBytes { decodedBytes in
                key(of: keyNode, matching: UnsafeRawBufferPointer(rebasing: decodedBytes[decoded...]))
            }
            if found >= 0 { take(key: found) }
        }
        if emitting > 0 { emitString(buffer, from: token, scanned) }
        dropDecoded(from: decoded)
    }

    /// When the token at `token` is any key of this node's objects written
    /// without escapes, takes it and returns the index after it; nil
    /// otherwise (the key, if one of them, has escapes: `takeKey` decodes it).
    @inline(never)
    mutating func takeAnyRawKey(_ buffer: UnsafeRawBufferPointer, from token: Int) -> Int? {
        let node = plan.nodes[keyNode]
        for index in node.keysStart..<node.keysEnd {
            if let close = rawMatch(buffer, from: token, key: index) {
                take(key: index)
                if emitting > 0 { emit(UnsafeRawBufferPointer(rebasing: buffer[token...close])) }
                return close &+ 1
            }
        }
        return nil
    }

    /// The index in the plan's keys of the child of `node` reached by `key`, or -1.
    func key(of node: Int, matching key: UnsafeRawBufferPointer) -> Int {
        let count = key.count
        let owner = plan.nodes[node]
        var prefix: UInt64 = 0
        var prefixDone = false
        for index in owner.keysStart..<owner.keysEnd {
            let candidate = plan.keys[index]
            guard candidate.count == count else { continue }
            if !prefixDone {
                prefix = Self.prefix(of: key)
                prefixDone = true
            }
            guard candidate.prefix == prefix else { continue }
            var same = true
            for offset in 8..<max(8, count) where plan.keyBytes[candidate.offset + offset] != key[offset] {
                same = false
                break
            }
            if same { return index }
        }
        return -1
    }

    /// The first (up to) 8 bytes of `key`, little-endian, zero-padded.
    @inline(__always)
    static func prefix(of key: UnsafeRawBufferPointer) -> UInt64 {
        let count = min(key.count, 8)
        var prefix: UInt64 = 0
        for index in 0..<count {
            prefix |= UInt64(key[index]) << (8 * UInt64(index))
        }
        return prefix
    }
}
