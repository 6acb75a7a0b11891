// swift-tools-version:6.1
import CompilerPluginSupport
import PackageDescription

let package = Package(
    name: "Swell",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "SwellStore", targets: ["SwellStore"]),
        .library(name: "SwellPipeline", targets: ["SwellPipeline"]),
        .executable(name: "swell", targets: ["swell"]),
        .executable(name: "surf-journal", targets: ["SurfJournalExample"]),
    ],
    // What `import SwellStore` brings besides SQLite and the in-memory store. A package that
    // depends on Swell with `traits: []` links no libpq and builds no swift-syntax (README
    // "Store types"); `swell` and the tests have every store whatever the traits.
    traits: [
        .trait(name: "PostgreSQL", description: "SwellStore opens postgres:// URLs (links libpq)."),
        .trait(name: "Macros", description: "SwellStore's @Entity macros (builds swift-syntax)."),
        .default(enabledTraits: ["PostgreSQL", "Macros"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.0.0"),
        // The DocC plugin (`scripts/docs.sh` builds SwellStore's catalog; SwellPipeline's through the plugin).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
        // `@Entity` and its companions: the macro plugin (SwellMacros) is built on it.
        .package(url: "https://github.com/swiftlang/swift-syntax", from: "603.0.0"),
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
            name: "CLibPQ",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"])]
        ),
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        .systemLibrary(
            name: "CLibDeflate",
            pkgConfig: "libdeflate",
            providers: [.apt(["libdeflate-dev"])]
        ),
        .systemLibrary(
            name: "COpenSSLCrypto",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        .target(
            name: "SwellLocks"
        ),
        .target(
            name: "SwellLibcrypto",
            dependencies: ["COpenSSLCrypto"]
        ),
        .target(
            name: "SwellCalendar"
        ),
        .target(
            name: "SwellStoreCore",
            dependencies: ["SwellCalendar", "SwellLocks"]
        ),
        .target(
            name: "SwellSQLite",
            dependencies: ["CSQLite", "SwellStoreCore"]
        ),
        .target(
            name: "SwellInMemoryStore",
            dependencies: ["SwellStoreCore", "SwellLocks"]
        ),
        // The compiler plugin expanding `@Entity`, `@Unique`, `@Relationship`, `@Transient`.
        .macro(
            name: "SwellMacros",
            dependencies: [
                .product(name: "SwiftSyntax", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
                .product(name: "SwiftSyntaxBuilder", package: "swift-syntax"),
                .product(name: "SwiftDiagnostics", package: "swift-syntax"),
                .product(name: "SwiftCompilerPlugin", package: "swift-syntax"),
            ]
        ),
        // Contexts, objects, the coordinator, the container, the fetched results controller,
        // batch execution: Core Data's model on the stores. The pipeline builds on this.
        .target(
            name: "SwellContexts",
            dependencies: [
                "SwellStoreCore", "SwellLocks",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // What users import: the contexts, the store types its traits name (`StoreType.linked`),
        // and typed entities (`@Entity`, `FetchDescriptor`, `#Predicate`) — apart because their
        // macro needs swift-syntax, which `swell` does without.
        .target(
            name: "SwellStore",
            dependencies: [
                "SwellContexts", "SwellStoreCore", "SwellSQLite", "SwellInMemoryStore",
                .target(name: "SwellPostgres", condition: .when(traits: ["PostgreSQL"])),
                .target(name: "SwellMacros", condition: .when(traits: ["Macros"])),
            ]
        ),
        .target(
            name: "SwellJSON"
        ),
        .target(
            name: "SwellPostgres",
            dependencies: ["CLibPQ", "SwellLibcrypto", "SwellStoreCore", "SwellLocks"]
        ),
        .target(
            name: "SwellHTTP",
            dependencies: ["CCurl", "SwellLibcrypto", "SwellCalendar", "SwellLocks"]
        ),
        .target(
            name: "SwellCSV",
            dependencies: ["CZlib", "CLibDeflate", "COpenSSLCrypto", "SwellLibcrypto", "SwellCalendar"]
        ),
        // What sources send, made readable before it is parsed: gzip input inflated, CSV rows
        // as NDJSON objects. (SwellCSV is the export's writer.)
        .target(
            name: "SwellInput",
            dependencies: ["CZlib"]
        ),
        .target(
            name: "SwellPipeline",
            dependencies: [
                "SwellContexts", "SwellSQLite", "SwellPostgres", "SwellJSON", "SwellHTTP", "SwellCSV", "SwellInput",
                "SwellCalendar", "SwellLocks",
                .product(name: "Yams", package: "Yams"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "swell",
            dependencies: [
                "SwellPipeline",
                "SwellContexts",
                "SwellHTTP",
                "SwellJSON",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "SwellTestSupport",
            dependencies: ["SwellLocks", .product(name: "Logging", package: "swift-log")],
            path: "Tests/SwellTestSupport"
        ),
        // `swift build -c release --product swell-json-bench`: times SwellJSON's readers; in no shipped product.
        .executableTarget(
            name: "swell-json-bench",
            dependencies: ["SwellJSON"],
            path: "bench/swell-json-bench"
        ),
        // `swift build -c release --product swell-typed-batch-bench`: a batch insert through a
        // described entity and through the same entity as an @Entity class; in no shipped product.
        .executableTarget(
            name: "swell-typed-batch-bench",
            dependencies: ["SwellStore"],
            path: "bench/swell-typed-batch-bench"
        ),
        // `swift build -c release --product swell-object-bench`: objects inserted, updated and
        // deleted through a context and saved (the object path's cost); in no shipped product.
        .executableTarget(
            name: "swell-object-bench",
            dependencies: ["SwellContexts", "SwellSQLite"],
            path: "bench/swell-object-bench"
        ),
        // `swift build -c release --product swell-migration-bench`: a 1M-row lightweight migration
        // (bench/migration.sh compares it with sqlite3 doing the same by hand); in no shipped product.
        .executableTarget(
            name: "swell-migration-bench",
            dependencies: ["SwellContexts", "SwellSQLite"],
            path: "bench/swell-migration-bench"
        ),
        .executableTarget(
            name: "SurfJournalExample",
            dependencies: ["SwellStore"],
            path: "examples/surf-journal-app"
        ),
        // What the store's test targets share: the journal model, `.onEveryStore` and the other
        // store-choosing traits, temporary stores, the typed and validation models.
        .target(
            name: "SwellStoreTestSupport",
            dependencies: ["SwellStore", "SwellContexts", "SwellStoreCore", "SwellSQLite", "SwellInMemoryStore", "SwellPostgres", "SwellTestSupport"],
            path: "Tests/SwellStoreTestSupport"
        ),
        // SwellStoreCore's rules: predicates (parsing, dialects, nil), merge-policy rules, errors,
        // object IDs, the commit procedure, the reader pool — each run on every store.
        .testTarget(
            name: "SwellStoreCoreTests",
            dependencies: ["SwellStoreTestSupport", "SwellStore", "SwellContexts", "SwellStoreCore", "SwellSQLite", "CSQLite", "SwellLocks", "SwellTestSupport"]
        ),
        // What only the SQLite store does: its file, WAL checkpoints, format migration, rowid keys,
        // two writers of one file, deferred disk syncs.
        .testTarget(
            name: "SwellSQLiteTests",
            dependencies: ["SwellStoreTestSupport", "SwellStore", "SwellContexts", "SwellStoreCore", "SwellSQLite", "CSQLite", "SwellTestSupport"]
        ),
        // The contexts: levels, saving, merging, relationships, batch requests, history, undo,
        // validation, pinned reads, the fetched results controller — on every store.
        .testTarget(
            name: "SwellContextsTests",
            dependencies: ["SwellStoreTestSupport", "SwellStore", "SwellContexts", "SwellStoreCore", "SwellSQLite", "CSQLite", "SwellLocks", "SwellPostgres", "SwellTestSupport", .product(name: "Logging", package: "swift-log")]
        ),
        // What `import SwellStore` adds: typed entities and predicates, the store types it links,
        // the porting article's examples.
        .testTarget(
            name: "SwellStoreTests",
            dependencies: ["SwellStoreTestSupport", "SwellStore", "SwellContexts", "SwellStoreCore", "SwellSQLite", "SwellInMemoryStore", "SwellTestSupport"]
        ),
        .testTarget(
            name: "SwellMacrosTests",
            dependencies: [
                "SwellMacros",
                .product(name: "SwiftSyntax", package: "swift-syntax"),
                .product(name: "SwiftParser", package: "swift-syntax"),
                .product(name: "SwiftDiagnostics", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacroExpansion", package: "swift-syntax"),
            ]
        ),
        .testTarget(
            name: "SwellPostgresTests",
            dependencies: ["SwellPostgres", "SwellStore", "SwellContexts", "SwellStoreCore", "SwellSQLite", "SwellLocks", "SwellTestSupport"]
        ),
        .testTarget(
            name: "SwellLocksTests",
            dependencies: ["SwellLocks"]
        ),
        .testTarget(
            name: "SwellCalendarTests",
            dependencies: ["SwellCalendar", "SwellTestSupport"]
        ),
        .testTarget(
            name: "SwellJSONTests",
            dependencies: ["SwellJSON"]
        ),
        .testTarget(
            name: "SwellHTTPTests",
            dependencies: ["SwellHTTP", "SwellLocks", "SwellTestSupport"]
        ),
        .testTarget(
            name: "SwellInputTests",
            dependencies: ["SwellInput", "SwellTestSupport"]
        ),
        .testTarget(
            name: "SwellCSVTests",
            dependencies: ["SwellCSV", "SwellCalendar", "CZlib", "SwellTestSupport"]
        ),
        // What the pipeline's two test targets share: workspaces and the built binary's runner,
        // in-process pipelines on every store, paged APIs, the many-hosts catalogue.
        .target(
            name: "SwellPipelineTestSupport",
            dependencies: [
                "SwellPipeline", "SwellStore", "SwellContexts", "SwellStoreCore", "SwellSQLite", "SwellPostgres",
                "SwellTestSupport", "SwellLocks", .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/SwellPipelineTestSupport"
        ),
        // The pipeline's parts in this process: files, stages, mapping, paging, exports' writers.
        .testTarget(
            name: "SwellPipelineTests",
            dependencies: ["SwellPipeline", "SwellPipelineTestSupport", "SwellStore", "SwellContexts", "SwellStoreCore", "SwellSQLite", "SwellCSV", "SwellHTTP", "SwellJSON", "SwellCalendar", "SwellTestSupport", "SwellLocks",
                           .product(name: "Logging", package: "swift-log")]
        ),
        // The built `swell` binary run as users and CI run it (argument-parser's EndToEndTests).
        .testTarget(
            name: "SwellEndToEndTests",
            dependencies: ["SwellPipeline", "SwellPipelineTestSupport", "SwellStore", "SwellContexts", "SwellStoreCore", "SwellSQLite", "SwellCSV", "SwellPostgres", "SwellHTTP", "SwellJSON", "SwellCalendar", "SwellTestSupport", "SwellLocks", "swell",
                           .product(name: "Logging", package: "swift-log")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
