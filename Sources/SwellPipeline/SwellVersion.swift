/// Swell's version: what `swell --version` prints, the run report's `swell_version`, and
/// the name of the release tarball (`scripts/build-release.sh`). Raised with each release.
public enum SwellVersion {
    /// This version, `major.minor.patch`.
    public static let current = "0.12.0"
    /// The `User-Agent` swell's HTTP requests carry unless a source sets its own: `swell/<current>`.
    public static let userAgent = "swell/\(current)"
}
