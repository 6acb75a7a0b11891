import Foundation
import SwellLocks

/// Everything `swell` writes to stderr while it runs — log lines and the progress block —
/// goes through here, one write at a time, so the two never overwrite each other.
///
/// On a terminal the progress block sits below the log and is redrawn in place: to print a
/// log line, the block is taken away (the cursor goes back up over it and clears to the end
/// of the screen), the line is written where the block was, and the block is drawn again
/// beneath it. Elsewhere, progress lines are appended like log lines.
package final class StandardErrorLines: Sendable {
    package static let shared = StandardErrorLines { FileHandle.standardError.write(Data($0.utf8)) }

    private struct State {
        /// The progress lines on screen below the log (terminal only).
        var block: [String] = []
    }

    private let state = LockedValue(State())
    private let output: @Sendable (String) -> Void

    /// `output` receives each write whole (tests give their own).
    package init(output: @escaping @Sendable (String) -> Void) {
        self.output = output
    }

    /// Writes log text (whole lines), above the progress block if one is on screen.
    package func log(_ text: String) {
        state.withLock { state in
            guard !state.block.isEmpty else { return output(text) }
            output(Self.takeAway(state.block) + text + Self.lines(state.block))
        }
    }

    /// Draws the progress `lines`: in place on a terminal, appended elsewhere.
    package func draw(_ lines: [String], terminal: Bool) {
        guard !lines.isEmpty else { return }
        state.withLock { state in
            guard terminal else { return output(Self.lines(lines)) }
            output(Self.takeAway(state.block) + Self.lines(lines))
            state.block = lines
        }
    }

    /// The progress is over: its last drawing stays, and later writes go below it.
    package func endDrawing() {
        state.withLock { $0.block = [] }
    }

    /// Back up over `block` and clear from there to the end of the screen.
    private static func takeAway(_ block: [String]) -> String {
        block.isEmpty ? "" : "\u{1B}[\(block.count)A\r\u{1B}[J"
    }

    private static func lines(_ lines: [String]) -> String {
        lines.map { $0 + "\n" }.joined()
    }
}

/// A `TextOutputStream` for swift-log's `StreamLogHandler` that writes through
/// `StandardErrorLines`, so log lines keep their place above the progress block. Each write
/// is one log line: its control characters (from a message or a metadata value) are written
/// visibly (`VisibleText`), so a value can never forge a line of its own.
package struct StandardErrorLogStream: TextOutputStream, Sendable {
    package let lines: StandardErrorLines

    package init(lines: StandardErrorLines) {
        self.lines = lines
    }

    package mutating func write(_ string: String) {
        lines.log(VisibleText.escapingLine(string))
    }
}
