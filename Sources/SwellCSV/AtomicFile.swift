#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A temporary file beside a target path that becomes the target only on `commit()`.
///
/// The one owner of the file descriptor and of the temporary file: `commit()` fsyncs, closes and
/// renames it onto the target (then fsyncs the directory); `discard()` or `deinit` closes and
/// removes it. Every system call goes through here, so every failure names the target path.
final class AtomicFile {
    /// The file the caller asked for.
    let targetPath: String
    /// ".<name>.tmp-<pid>-<random>" in the target's directory.
    let temporaryPath: String
    /// Bytes handed to write(2) and accepted so far.
    private(set) var bytesWritten: Int64 = 0
    private var descriptor: Int32
    private var state = State.open
    /// Sees every byte the file gets, in order (a digest computed as the file is written).
    let observer: ((UnsafeRawBufferPointer) -> Void)?

    private enum State {
        case open, committed, discarded
    }

    /// Creates the target's missing directories and an empty temporary file beside the target.
    init(path: String, observer: ((UnsafeRawBufferPointer) -> Void)? = nil) throws(CSVError) {
        guard !path.isEmpty else {
            throw CSVError(.invalidPath, path: path, message: "the path is empty")
        }
        let (directory, name) = AtomicFile.split(path)
        guard !name.isEmpty, name != ".", name != ".." else {
            throw CSVError(.invalidPath, path: path, message: "the path does not name a file")
        }
        try AtomicFile.makeDirectories(directory, for: path)
        let random = String(UInt64.random(in: 0...UInt64.max), radix: 36)
        let temporaryName = ".\(name).tmp-\(getpid())-\(random)"
        let temporaryPath = directory.isEmpty ? temporaryName : "\(directory)/\(temporaryName)"
        let fd = open(temporaryPath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o666)
        guard fd >= 0 else {
            throw CSVError.system(path: path, "cannot create '\(temporaryPath)'", errno: errno)
        }
        self.targetPath = path
        self.temporaryPath = temporaryPath
        self.descriptor = fd
        self.observer = observer
    }

    deinit {
        discard()
    }

    /// Writes all of `bytes` to the temporary file (one write(2) unless the kernel takes less).
    ///
    /// On a failure (ENOSPC, EIO, …) the temporary file is removed and later calls fail too.
    func write(_ bytes: UnsafeRawBufferPointer) throws(CSVError) {
        try checkOpen()
        do {
            try AtomicFile.writeAll(descriptor, bytes, path: targetPath, fileName: temporaryPath)
        } catch {
            discard()
            throw error
        }
        bytesWritten += Int64(bytes.count)
        observer?(bytes)
    }

    /// Flushes the file to disk, closes it and renames it onto the target; then fsyncs the directory.
    ///
    /// On a failure the temporary file is removed and the target is left as it was.
    func commit() throws(CSVError) {
        try checkOpen()
        if fsync(descriptor) != 0 {
            let code = errno
            discard()
            throw CSVError.system(path: targetPath, "cannot fsync '\(temporaryPath)'", errno: code)
        }
        let fd = descriptor
        descriptor = -1
        if close(fd) != 0 {
            let code = errno
            discard()
            throw CSVError.system(path: targetPath, "cannot close '\(temporaryPath)'", errno: code)
        }
        if rename(temporaryPath, targetPath) != 0 {
            let code = errno
            discard()
            throw CSVError.system(path: targetPath, "cannot rename '\(temporaryPath)' onto it", errno: code)
        }
        state = .committed
        AtomicFile.syncDirectory(AtomicFile.split(targetPath).directory)
    }

    /// Closes and removes the temporary file; the target is untouched. Does nothing once committed or discarded.
    func discard() {
        guard state == .open else { return }
        state = .discarded
        if descriptor >= 0 {
            close(descriptor)
            descriptor = -1
        }
        unlink(temporaryPath)
    }

    /// Throws unless the file is still open for writing (not committed, discarded or failed).
    func checkOpen() throws(CSVError) {
        switch state {
        case .open:
            return
        case .committed:
            throw CSVError(.finished, path: targetPath, message: "the file is already finished")
        case .discarded:
            throw CSVError(.finished, path: targetPath, message: "the file was abandoned after an earlier error or abort()")
        }
    }
}

extension AtomicFile {
    /// Writes every byte of `bytes` to `descriptor`, retrying on EINTR and short writes.
    ///
    /// - Throws: `CSVError` naming `path`, with `fileName` and the errno text (ENOSPC, EIO, …).
    static func writeAll(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer, path: String, fileName: String) throws(CSVError) {
        guard var next = bytes.baseAddress else { return }
        var remaining = bytes.count
        while remaining > 0 {
            let written = systemWrite(descriptor, next, remaining)
            if written < 0 {
                let code = errno
                if code == EINTR { continue }
                throw CSVError.system(path: path, "cannot write '\(fileName)'", errno: code)
            }
            if written == 0 {
                throw CSVError(.writeStalled, path: path, message: "cannot write '\(fileName)': write(2) accepted no bytes")
            }
            next += written
            remaining -= written
        }
    }

    /// "a/b/c.csv" → ("a/b", "c.csv"); "c.csv" → ("", "c.csv"); "/c.csv" → ("/", "c.csv").
    static func split(_ path: String) -> (directory: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else {
            return ("", path)
        }
        let name = String(path[path.index(after: slash)...])
        var directory = String(path[..<slash])
        while directory.hasSuffix("/") { directory.removeLast() }
        return (directory.isEmpty ? "/" : directory, name)
    }

    /// `mkdir -p directory`; failures name `path` (the file being created) and the directory.
    static func makeDirectories(_ directory: String, for path: String) throws(CSVError) {
        guard !directory.isEmpty else { return }
        var info = stat()
        if stat(directory, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFDIR else {
                throw CSVError.system(path: path, "cannot use '\(directory)' as a directory", errno: ENOTDIR)
            }
            return
        }
        let code = errno
        guard code == ENOENT else {
            throw CSVError.system(path: path, "cannot use '\(directory)' as a directory", errno: code)
        }
        let parent = split(directory).directory
        if parent != directory {
            try makeDirectories(parent, for: path)
        }
        if mkdir(directory, 0o777) != 0 {
            let code = errno
            guard code == EEXIST, stat(directory, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
                throw CSVError.system(path: path, "cannot create directory '\(directory)'", errno: code)
            }
        }
    }

    /// Makes a rename durable: fsync of the directory. Best effort (some file systems refuse it).
    private static func syncDirectory(_ directory: String) {
        let fd = open(directory.isEmpty ? "." : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = fsync(fd)
        close(fd)
    }

    private static func systemWrite(_ fd: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
        #if canImport(Glibc)
        Glibc.write(fd, bytes, count)
        #elseif canImport(Musl)
        Musl.write(fd, bytes, count)
        #else
        Darwin.write(fd, bytes, count)
        #endif
    }
}
