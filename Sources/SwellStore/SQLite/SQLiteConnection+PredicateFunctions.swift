extension SQLiteConnection {
    /// Placeholder until the predicate functions land.
    func registerPredicateFunctions() throws(SQLiteError) {}
}
