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
            throw ExitCode(64)
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

/// Prints the progress line on stderr about once a second while a run goes on.
///
/// `@unchecked Sendable`: the timer fires on its own serial queue; the counter is atomic.
final class ProgressTicker: @unchecked Sendable {
    private let counter: ProgressCounter
    private let timer: DispatchSourceTimer

    init(counter: ProgressCounter) {
        self.counter = counter
        timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "swell.progress"))
        timer.schedule(deadline: .now() + 1, repeating: 1)
        timer.setEventHandler { FileHandle.standardError.write(Data("\r\(counter.line)".utf8)) }
        timer.resume()
    }

    func stop() {
        timer.cancel()
        FileHandle.standardError.write(Data("\r\(counter.line)\n".utf8))
    }
}
