import SwellStoreCore

extension ManagedObjectContext {
    /// The objects of `join.owner` whose join-table to-many (their column `column`) lists
    /// `member`, as this context sees them: the store's links, overridden by unsaved changes
    /// of that column here and in the parents (nearest first), ascending by primary key.
    func owners(in join: JoinTable, column: Int, linking member: Int64) throws -> [Int64] {
        let layers = layerChain(entity: join.owner, includeSelf: true)
        let stored = try readStore { try $0.owners(in: join, linking: member) }
        var decided: [Int64: Bool] = [:]
        for changes in layers {
            for (primaryKey, row) in changes.rows where decided[primaryKey] == nil {
                switch row.kind {
                case .deleted:
                    decided[primaryKey] = false
                case .inserted:
                    decided[primaryKey] = JoinTable.decode(row.values[column]).contains(member)
                case .updated:
                    if row.mask.contains(column) { decided[primaryKey] = JoinTable.decode(row.values[column]).contains(member) }
                }
            }
        }
        var result = stored.filter { decided[$0] ?? true }
        let storedSet = Set(stored)
        result += decided.compactMap { $0.value && !storedSet.contains($0.key) ? $0.key : nil }
        return result.sorted()
    }
}
