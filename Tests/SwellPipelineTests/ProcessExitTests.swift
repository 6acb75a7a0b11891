import Foundation
import SwellCSV
import SwellHTTP
import Testing
import SwellPipelineTestSupport

/// `swell` ends its process while other threads may still be running (an export's digest, a
/// fetch thread's TLS, threads ending). libcrypto's exit-time clean-up must not free its tables
/// under such a thread: with it, `swell` died now and then at exit with "double free or
/// corruption" in a run that had succeeded (an exit's OPENSSL_cleanup against a thread's own
/// clean-up). Whichever starts libcrypto first — the export's digest or libcurl — keeps it to
/// the end of the process (`LibcryptoLifetime`). One child process lost that race about two
/// times in five: twelve of them lose it at least once all but once in a hundred and fifty runs.
@Suite struct ProcessExitTests {
    /// What starts libcrypto first in the child.
    enum FirstStart: String, CaseIterable, Sendable, Codable {
        case digest, libcurl
    }

    @Test(arguments: FirstStart.allCases, 1...12)
    func exitingWhileAThreadDigestsEndsTheProcessCleanly(first: FirstStart, child: Int) async {
        await #expect(processExitsWith: .exitCode(0)) { [first] in
            // Only libcurl's set-up matters here, not the client it makes.
            if first == .libcurl { _ = try? HTTPClient(userAgent: "swell-test") }
            let running = DispatchSemaphore(value: 0)
            let bytes = [UInt8](repeating: 7, count: 4096)
            for _ in 0..<2 {
                Thread {
                    running.signal()
                    while true { _ = SHA256Digest.hex(of: bytes) }
                }.start()
            }
            running.wait()
            running.wait()
            exit(0)
        }
    }
}
