import Foundation
import SwellStoreCore

/// Copies a seed store (with its `-wal` and `-shm` files) to a store path so
/// that the store appears whole or not at all.
///
/// The files are copied into a temporary folder beside the target, the
/// target's old files are removed (the main file first, so a crash leaves
/// either no store or the old one's data gone with it, never a mix), then the
/// `-wal` and `-shm` are renamed into place, and the main file last: a main
/// file at the target means the copy is complete.
public enum StoreSeeder {
    /// Installs `seed` at `target` when no store is there, or always when `replacing`.
    /// - Returns: whether it installed the seed.
    public static func install(seed: URL, at target: URL, replacing: Bool) throws(StoreError) -> Bool {
        let manager = FileManager.default
        let path = target.path
        if manager.fileExists(atPath: path) && !replacing { return false }
        guard manager.isReadableFile(atPath: seed.path) else {
            throw .seedFailed(path: path, reason: "the seed \(seed.path) does not exist or cannot be read")
        }
        let directory = target.deletingLastPathComponent()
        let staging = directory.appendingPathComponent(".\(target.lastPathComponent).seed-\(UUID().uuidString)")
        do {
            try manager.createDirectory(at: staging, withIntermediateDirectories: true)
            defer { try? manager.removeItem(at: staging) }
            let suffixes = ["", "-wal", "-shm"]
            var staged: [String] = []
            for suffix in suffixes {
                let source = URL(fileURLWithPath: seed.path + suffix)
                guard suffix.isEmpty || manager.fileExists(atPath: source.path) else { continue }
                try manager.copyItem(at: source, to: staging.appendingPathComponent("store" + suffix))
                staged.append(suffix)
            }
            if manager.fileExists(atPath: path) { try manager.removeItem(atPath: path) }
            for suffix in ["-wal", "-shm"] where manager.fileExists(atPath: path + suffix) {
                try manager.removeItem(atPath: path + suffix)
            }
            for suffix in staged.sorted(by: { $0.count > $1.count }) {
                guard rename(staging.appendingPathComponent("store" + suffix).path, path + suffix) == 0 else {
                    throw StoreError.seedFailed(path: path, reason: String(cString: strerror(errno)))
                }
            }
            return true
        } catch let error as StoreError {
            throw error
        } catch {
            throw .seedFailed(path: path, reason: error.localizedDescription)
        }
    }
}
