// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "Swell",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "SwellStore", targets: ["SwellStore"]),
        .executable(name: "swell", targets: ["swell"]),
        .executable(name: "surf-journal", targets: ["SurfJournalExample"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        .target(
            name: "SwellStore",
            dependencies: ["CSQLite"]
        ),
        .executableTarget(
            name: "swell",
            dependencies: [
                "SwellStore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(
            name: "SurfJournalExample",
            dependencies: ["SwellStore"],
            path: "Examples/SurfJournal"
        ),
        .testTarget(
            name: "SwellStoreTests",
            dependencies: ["SwellStore"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
