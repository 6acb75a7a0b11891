import Foundation

/// The seeds and steps of the differential tests, one rule for all of them: CI runs seeds
/// 1…`ci`; `SWELL_DIFF_SEEDS=N` runs 1…N, `SWELL_DIFF_SEED=n` replays seed n alone, and
/// `SWELL_DIFF_STEPS` sets the steps (events, rounds) per seed.
public enum DifferentialSeeds {
    /// The seeds to run, `ci` of them unless the environment says otherwise.
    public static func seeds(ci: UInt64) -> [UInt64] {
        let environment = ProcessInfo.processInfo.environment
        if let one = environment["SWELL_DIFF_SEED"].flatMap(UInt64.init) { return [one] }
        return Array(1...max(1, environment["SWELL_DIFF_SEEDS"].flatMap(UInt64.init) ?? ci))
    }

    /// The steps per seed, `ci` unless `SWELL_DIFF_STEPS` says otherwise.
    public static func steps(ci: Int) -> Int {
        ProcessInfo.processInfo.environment["SWELL_DIFF_STEPS"].flatMap(Int.init) ?? ci
    }
}
