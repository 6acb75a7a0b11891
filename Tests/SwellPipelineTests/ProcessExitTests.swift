import Foundation
import SwellCSV
import SwellHTTP
import Testing

/// `swell` ends its process while other threads may still be running (an export's digest, a
/// fetch thread's TLS, threads ending). libcurl initialises libcrypto before the export's
/// digest does, so libcurl's set-up too must keep libcrypto's tables to the end of the
/// process (SHA256DigestTests has the digest-first order).
@Suite struct ProcessExitTests {
    @Test(arguments: 1...12) func exitingAfterLibcurlStartedWhileAThreadDigestsEndsCleanly(child: Int) async {
        await #expect(processExitsWith: .exitCode(0)) {
            _ = try? HTTPClient(userAgent: "swell-test")
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
