/// When a worker looks a chunk's keys up in the store to leave unchanged records
/// out (a re-sync), and when it does not bother (a first import, where no key is
/// stored): after a chunk with no stored key the next look-up waits 1, 2, 4 … up
/// to 16 chunks; a chunk with stored keys makes every chunk look again.
///
/// Only a cost choice: a record not looked up goes into the context and is
/// resolved by the save, with the same result.
struct UnchangedProbe {
    private var skipping = 0
    private var backoff = 0

    /// Whether to look this chunk's keys up.
    mutating func shouldLookUp() -> Bool {
        guard skipping == 0 else {
            skipping -= 1
            return false
        }
        return true
    }

    /// What a look-up found: how many of the chunk's keys were stored.
    mutating func found(_ stored: Int) {
        if stored > 0 {
            backoff = 0
        } else {
            backoff = min(max(1, backoff * 2), 16)
            skipping = backoff
        }
    }
}
