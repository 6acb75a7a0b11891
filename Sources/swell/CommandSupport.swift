import ArgumentParser
import Foundation
import Logging
import SwellPipeline

/// What every command shares: logging, loading the file, running off the main queue.
enum CommandSupport {
    /// Logs go to stderr at `level`; called once per process.
    static func bootstrapLogging(level: Logger.Level) -> Logger {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        var logger = Logger(label: "swell")
        logger.logLevel = level
        return logger
    }

    /// Loads and validates a pipeline file, or exits 64 naming file, line and column.
    static func loadPipeline(_ path: String) throws -> PipelineFile {
        do {
            return try PipelineFileLoader().load(path: path)
        } catch {
            printError(error.description)
            throw ExitCode(ExitStatus.usage)
        }
    }

    static func printError(_ message: String) {
        FileHandle.standardError.write(Data("swell: \(message)\n".utf8))
    }

    /// Runs blocking work on its own thread, so the main queue stays free for the view context.
    static func offMainQueue<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            let thread = Thread { continuation.resume(returning: work()) }
            thread.stackSize = 8 << 20
            thread.start()
        }
    }
}

/// Shows a run's progress on stderr about once a second: one line per source (records,
/// records/s, pages, bytes; a percentage and ETA when the size is known). On a terminal
/// the lines update in place (the cursor goes back up over them); elsewhere
/// (`--progress always` into a file or pipe) each tick appends them, without escapes.
///
/// `@unchecked Sendable`: the timer fires on its own serial queue, which alone touches
/// `drawn`; `stop` cancels the timer and draws the last time on that queue.
final class ProgressTicker: @unchecked Sendable {
    private let counter: ProgressCounter
    private let queue = DispatchQueue(label: "swell.progress")
    private let timer: DispatchSourceTimer
    private let terminal: Bool
    /// Lines drawn last time (on a terminal: how far to go back up).
    private var drawn = 0

    init(counter: ProgressCounter, terminal: Bool) {
        self.counter = counter
        self.terminal = terminal
        timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + 1, repeating: 1)
        timer.setEventHandler { [unowned self] in draw() }
        timer.resume()
    }

    private func draw() {
        let lines = counter.lines()
        guard !lines.isEmpty else { return }
        var text = ""
        if terminal {
            if drawn > 0 { text += "\u{1B}[\(drawn)A" }        // back up over the last drawing
            for line in lines { text += "\r\u{1B}[2K" + line + "\n" }   // clear each line, write it
        } else {
            text = lines.map { $0 + "\n" }.joined()
        }
        drawn = lines.count
        FileHandle.standardError.write(Data(text.utf8))
    }

    func stop() {
        timer.cancel()
        queue.sync { draw() }
    }
}
