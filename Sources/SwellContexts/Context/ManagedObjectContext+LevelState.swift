import SwellStoreCore

extension ManagedObjectContext {
    /// A context's unsaved changes as other queues see them (behind the context's
    /// `level` lock): its own edits and children's saves, the segments moved up
    /// whole, a root's changes in flight to the store, and store metadata.
    struct LevelState: Sendable {
        /// Unsaved changes at this level (own edits and children's saves), as one layer.
        /// Reading or changing it first folds the segments into it (per-row work): the
        /// fast paths use `layers`, `appendSegment` and `takeLayers` instead.
        var pending: ChangeLayer {
            mutating get {
                foldSegments()
                return base
            }
            set {
                base = newValue
                segments.removeAll()
                pendingVersion &+= 1
            }
            _modify {
                foldSegments()
                pendingVersion &+= 1
                yield &base
            }
        }
        /// The changes that are not in a segment; older than every segment.
        private var base = ChangeLayer()
        /// Whole layers of new objects moved here by children's saves without per-row
        /// work, oldest first, never changed once here: every row is an insert whose
        /// key was checked against every level above and the store (`ChangeLayer.keysChecked`).
        private(set) var segments: [ChangeLayer] = []
        /// Counts changes to this level: a save that read the store before taking
        /// the locks checks with it that its level did not change meanwhile.
        private(set) var pendingVersion: UInt64 = 0
        /// A root context's changes being committed to the store right now, oldest first.
        var inFlight: [ChangeLayer] = []
        /// Values set with the wrong type or on unknown attributes since the last save.
        var invalidValues: [StoreError] = []
        /// Store metadata set here (or saved into here) and not yet saved: key → value (nil removes).
        var metadata: [String: String?] = [:]
        /// Whether this context's own objects were inserted, changed or deleted since the last save
        /// (then only a save on the queue may move the changes: it updates those objects).
        var hasObjectEdits = false

        /// This level's changes without folding, nearest (newest) first.
        var layers: [ChangeLayer] {
            segments.isEmpty ? [base] : segments.reversed() + [base]
        }

        /// The changes not in a segment (without folding).
        var unsegmented: ChangeLayer { base }

        /// Whether the level holds no change (without folding).
        var isEmpty: Bool { base.isEmpty && segments.allSatisfy(\.isEmpty) }

        /// Adds a whole layer of key-checked inserts as the newest segment: no per-row work.
        mutating func appendSegment(_ layer: ChangeLayer) {
            precondition(layer.keysChecked, "a segment holds only key-checked inserts")
            segments.append(layer)
            pendingVersion &+= 1
        }

        /// Takes every change, oldest first (the unsegmented changes, then the segments), leaving the level empty.
        mutating func takeLayers() -> [ChangeLayer] {
            var taken = base.isEmpty ? [] : [base]
            taken += segments
            base = ChangeLayer()
            segments.removeAll()
            pendingVersion &+= 1
            return taken
        }

        /// This level's own change of an object (without folding: a segment's rows are new objects, in no other layer).
        func row(_ id: ObjectID) -> PendingRow? {
            for segment in segments.reversed() {
                if let row = segment.row(id) { return row }
            }
            return base.row(id)
        }

        private mutating func foldSegments() {
            guard !segments.isEmpty else { return }
            base = ChangeLayer.folded([base] + segments)
            segments.removeAll()
        }
    }
}
