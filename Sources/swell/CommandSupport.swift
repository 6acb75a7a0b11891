import ArgumentParser
import Foundation
import Logging
import SwellPipeline

/// What every command shares: logging, loading the file, running off the main queue.
enum CommandSupport {
    /// Logs go to stderr at `level`; called once per process.
    static func bootstrapLogging(level: Logger.Level) -> Logger {
        LoggingSystem.bootstrap { label in
            // Through `StandardErrorLines`: a progress block redrawn on a terminal never covers a log line.
            var handler = StreamLogHandler(label: label, stream: StandardErrorLogStream(lines: .shared))
            handler.logLevel = level
            return handler
        }
        var logger = Logger(label: "swell")
        logger.logLevel = level
        return logger
    }

    /// Loads and validates a pipeline file, or exits 64 naming file, line and column of
    /// every problem in it, one per line; with `report`, the run report says so too (a report
    /// is written also when the run fails, here before it started).
    static func loadPipeline(_ path: String, report: String? = nil) throws -> PipelineFile {
        do {
            return try PipelineFileLoader().load(path: path)
        } catch {
            for problem in error.all { printError(problem.description) }
            if let report {
                do {
                    try RunReport.notStarted(pipelineFile: path, error: error.description).write(to: report)
                } catch let writeError {
                    printError("cannot write the report \(report): \(writeError.localizedDescription)")
                }
            }
            throw ExitCode(ExitStatus.usage)
        }
    }

    /// `swell: message` on stderr, one line: control characters in it (a value from a page or
    /// the store) are written visibly (`VisibleText`).
    static func printError(_ message: String) {
        FileHandle.standardError.write(Data("swell: \(VisibleText.escaping(message))\n".utf8))
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
/// the lines update in place below the log (`StandardErrorLines`); elsewhere
/// (`--progress always` into a file or pipe) each tick appends them, without escapes.
final class ProgressTicker {
    private let counter: ProgressCounter
    private let timer: DispatchSourceTimer
    private let terminal: Bool
    private let output: StandardErrorLines

    init(counter: ProgressCounter, terminal: Bool, output: StandardErrorLines = .shared) {
        self.counter = counter
        self.terminal = terminal
        self.output = output
        timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "swell.progress"))
        timer.schedule(deadline: .now() + 1, repeating: 1)
        timer.setEventHandler { [counter, output] in output.draw(counter.lines(), terminal: terminal) }
        timer.resume()
    }

    /// Draws the last time; what is written later goes below it.
    func stop() {
        timer.cancel()
        output.draw(counter.lines(), terminal: terminal)
        output.endDrawing()
    }
}
