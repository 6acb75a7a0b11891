import Foundation

/// One writing run per store: an exclusive `flock` on `<store>.lock`, which
/// holds the holder's process id. The kernel drops the lock when the holder
/// dies (kill -9 included), so a stale lock file is simply taken over.
public final class StoreLock {
    /// The lock file: the store's path with `.lock` appended.
    public let path: String
    private let descriptor: Int32

    /// Takes the lock; with `wait`, blocks until the holder is done (calling
    /// `onWait` with the holder's pid first), else throws `.locked` naming the holder's pid.
    public init(store: StoreLocation, wait: Bool, onWait: (Int32?) -> Void = { _ in }) throws(PipelineError) {
        path = store.rawValue + ".lock"
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        // A directory that cannot be made shows as the open's failure just below, with errno's words.
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            throw PipelineError(.io, "cannot open the lock file \(store).lock: \(String(cString: strerror(errno)))")
        }
        if flock(fd, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK, wait else {
                let holder = Self.holder(fd)
                close(fd)
                throw PipelineError(.locked, "another run (pid \(holder.map(String.init) ?? "unknown")) holds the store \(store); use --wait to queue behind it")
            }
            onWait(Self.holder(fd))
            while flock(fd, LOCK_EX) != 0 {
                guard errno == EINTR else {
                    close(fd)
                    throw PipelineError(.io, "cannot lock \(store).lock: \(String(cString: strerror(errno)))")
                }
            }
        }
        descriptor = fd
        let pid = "\(getpid())\n"
        _ = ftruncate(fd, 0)
        _ = pid.withCString { pwrite(fd, $0, strlen($0), 0) }
    }

    deinit {
        _ = ftruncate(descriptor, 0)
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }

    private static func holder(_ fd: Int32) -> Int32? {
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = pread(fd, &buffer, 31, 0)
        guard count > 0 else { return nil }
        return Int32(String(decoding: buffer[0..<count], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
