import Foundation

/// Checks `condition` every 20 ms until it holds or `seconds` pass; whether it held.
///
/// For state another process owns and announces to nobody — a PostgreSQL session waiting
/// on a lock, a session gone, a lock freed: the only way to see it is to look, so each poll
/// is a real look, and the bound keeps a failing test finite. Where an event exists (a
/// semaphore, a line on a child's stderr), wait on the event instead.
public func eventually(within seconds: Double, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while true {
        if try condition() { return true }
        if Date() > deadline { return false }
        Thread.sleep(forTimeInterval: 0.02)
    }
}
