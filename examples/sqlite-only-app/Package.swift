// swift-tools-version:6.1
// A SwellStore app that uses SQLite only: it depends on Swell with no package traits, so it
// links no libpq and builds no swift-syntax (README "Store types"; measured in BENCHMARKS.md
// by `bench/sqlite-only-app.sh`). Build it from here: `swift build`, `swift run notes-app`.
import PackageDescription

let package = Package(
    name: "NotesApp",
    dependencies: [
        .package(name: "Swell", path: "../..", traits: []),
    ],
    targets: [
        .executableTarget(
            name: "NotesApp",
            dependencies: [.product(name: "SwellStore", package: "Swell")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
