import Foundation
import SwellLocks
import Testing
@testable import SwellPipeline
import SwellPipelineTestSupport

/// On a terminal, the progress block is redrawn in place below the log: a log line printed
/// between two drawings stays on screen, and no stale progress line is left behind (a block
/// that shrinks, the last drawing before later output). Checked on what a terminal would show,
/// by a small emulator of the escapes `StandardErrorLines` writes.
@Suite struct ProgressLinesTests {
    /// What a terminal shows after `text`: `\n` goes to the next line's start, `\r` to this
    /// line's start, `ESC[nA` up n lines, `ESC[J` clears to the end of the screen, `ESC[2K` the line.
    static func screen(_ text: String) -> [String] {
        var rows: [[Character]] = [[]]
        var row = 0, column = 0
        var characters = Array(text)[...]
        while let character = characters.popFirst() {
            switch character {
            case "\n":
                row += 1
                column = 0
                if row == rows.count { rows.append([]) }
            case "\r":
                column = 0
            case "\u{1B}":
                guard characters.popFirst() == "[" else { continue }
                var digits = ""
                while let next = characters.first, next.isNumber { digits.append(next); characters.removeFirst() }
                switch characters.popFirst() {
                case "A": row = max(0, row - (Int(digits) ?? 1))
                case "J":
                    rows[row] = Array(rows[row].prefix(column))
                    rows.removeSubrange((row + 1)...)
                case "K": rows[row] = []
                default: break
                }
            default:
                if column < rows[row].count { rows[row][column] = character } else { rows[row].append(character) }
                column += 1
            }
        }
        return rows.map { String($0) }.filter { !$0.isEmpty }
    }

    @Test func logLinesStayAboveTheRedrawnProgress() {
        let written = LockedValue("")
        let lines = StandardErrorLines { text in written.withLock { $0 += text } }
        lines.log("first log line\n")
        lines.draw(["items: 10 records", "orders: 5 records"], terminal: true)
        lines.log("export written\n")
        lines.draw(["items: 20 records", "orders: 9 records"], terminal: true)
        lines.draw(["items: 30 records"], terminal: true)   // a block that shrinks leaves nothing behind
        lines.log("another line\n")
        lines.draw(["items: 40 records, done in 1.0 s"], terminal: true)
        lines.endDrawing()
        lines.log("summary\n")
        #expect(Self.screen(written.withLock { $0 }) == ["first log line", "export written", "another line",
                                                         "items: 40 records, done in 1.0 s", "summary"])
    }

    @Test func elsewhereProgressIsAppendedWithoutEscapes() {
        let written = LockedValue("")
        let lines = StandardErrorLines { text in written.withLock { $0 += text } }
        lines.draw(["items: 10 records"], terminal: false)
        lines.log("export written\n")
        lines.draw(["items: 20 records"], terminal: false)
        #expect(written.withLock { $0 } == "items: 10 records\nexport written\nitems: 20 records\n")
    }
}
