// swift-tools-version:6.0
//
// Breeze: an append-only event log with CRDT merge, for personal environmental apps.
// Layers (each depends only on those above it in this list; see ARCHITECTURE.md):
//   CSQLite, CLibUV, CSodium, CZlib, CMicroHTTPD, CCurl   system libraries (module.modulemap + shim.h)
//   BreezeCrypto               hashing (libsodium), the only importer of CSodium
//   BreezeCore                 ids, clocks, version vectors, events, codec, CRDTs, user state: pure Swift
//   BreezeAirQuality           AQI, NowCast, PurpleAir corrections, pollen and climate maths: pure Swift
//   BreezeImport               parsers for the real data formats (CSV, JSON, gzip): records, no I/O beyond bytes
//   BreezeProjections          one read model per app screen, pure functions of projected facts and user state
//   BreezeStore                the SQLite log, the only importer of CSQLite
//   BreezeSync                 the wire protocol: frames, messages, the sans-IO session state machine
//   BreezeNet                  the libuv shell: loop thread, TCP, timers, the replica node (only importer of CLibUV)
//   BreezeInspect              HTTP over libmicrohttpd (only importer of CMicroHTTPD), SSE, Prometheus text, the inspector page
//   Breeze                     the library an app imports: Replica (edits, screens, observation, sync, imports)
//   BreezeFeeds                provider feeds for servers: HTTP by libcurl (only importer of CCurl), polling policy
//   BreezeCLI                  the `breeze` commands as a library, so tests can call them; clients of Breeze
//   tools/breeze               the executable: a few lines calling BreezeCLI
//   tools/breeze-bench         the benchmarks, beside the CLI
import PackageDescription

let package = Package(
    name: "Breeze",
    products: [
        .executable(name: "breeze", targets: ["BreezeTool"]),
        .library(name: "Breeze", targets: ["Breeze"]),
        .library(name: "BreezeCore", targets: ["BreezeCore"]),
        .library(name: "BreezeStore", targets: ["BreezeStore"]),
    ],
    targets: [
        .systemLibrary(name: "CSQLite", path: "Sources/CSQLite", pkgConfig: "sqlite3",
                       providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CLibUV", path: "Sources/CLibUV", pkgConfig: "libuv",
                       providers: [.apt(["libuv1-dev"])]),
        .systemLibrary(name: "CSodium", path: "Sources/CSodium", pkgConfig: "libsodium",
                       providers: [.apt(["libsodium-dev"])]),
        .systemLibrary(name: "CZlib", path: "Sources/CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(name: "CMicroHTTPD", path: "Sources/CMicroHTTPD", pkgConfig: "libmicrohttpd",
                       providers: [.apt(["libmicrohttpd-dev"])]),
        .systemLibrary(name: "CCurl", path: "Sources/CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .target(name: "BreezeCrypto", dependencies: ["CSodium"]),
        .target(name: "BreezeCore", dependencies: ["BreezeCrypto"], linkerSettings: [.linkedLibrary("m")]),
        .target(name: "BreezeAirQuality", dependencies: ["BreezeCore"], linkerSettings: [.linkedLibrary("m")]),
        .target(name: "BreezeStore", dependencies: ["BreezeCore", "BreezeCrypto", "BreezeAirQuality", "CSQLite"]),
        .target(name: "BreezeSync", dependencies: ["BreezeCore", "BreezeCrypto"]),
        .target(name: "BreezeNet", dependencies: ["BreezeSync", "BreezeStore", "BreezeCore", "BreezeCrypto", "CLibUV"]),
        .target(name: "BreezeImport", dependencies: ["BreezeCore", "CZlib"]),
        .target(name: "BreezeProjections", dependencies: ["BreezeCore", "BreezeAirQuality"]),
        // The inspector's web side and the metrics endpoint: an HTTP server over libmicrohttpd (the only importer
        // of CMicroHTTPD), server-sent events, the Prometheus text format, and the page (HTML, CSS, JS) built in.
        .target(name: "BreezeInspect", dependencies: ["BreezeCore", "BreezeCrypto", "CMicroHTTPD"]),
        // Provider feeds (`breeze feed`): HTTP and TLS by libcurl (the only importer of CCurl), the polling policy
        // (intervals, backoff with jitter, Retry-After, refused keys), each response stored through the importers.
        .target(name: "BreezeFeeds", dependencies: ["Breeze", "BreezeCore", "BreezeStore", "BreezeImport", "CCurl"]),
        .target(name: "Breeze", dependencies: ["BreezeCore", "BreezeStore", "BreezeSync", "BreezeNet", "BreezeCrypto", "BreezeImport",
                                               "BreezeProjections", "BreezeAirQuality"]),
        .target(name: "BreezeCLI", dependencies: ["Breeze", "BreezeFeeds", "BreezeCore", "BreezeStore", "BreezeSync", "BreezeNet", "BreezeCrypto", "BreezeImport",
                                                  "BreezeProjections", "BreezeAirQuality", "BreezeInspect"]),
        .executableTarget(name: "BreezeTool", dependencies: ["BreezeCLI"], path: "tools/breeze"),
        // The benchmarks (`breeze-bench`, run by tools/bench.sh): a tool beside the CLI, not a command of it.
        .executableTarget(name: "breeze-bench", dependencies: ["Breeze", "BreezeCLI", "BreezeCore", "BreezeStore", "BreezeSync",
                                                             "BreezeNet", "BreezeCrypto", "BreezeImport", "BreezeProjections"],
                          path: "tools/breeze-bench"),
        // Test-only: the fault-injecting SQLite VFS (power loss, disk full, write/fsync errors), linked into
        // breeze-torture and never into the `breeze` product.
        .target(name: "CFaultVFS", dependencies: ["CSQLite"], path: "Sources/CFaultVFS"),
        .executableTarget(name: "breeze-torture", dependencies: ["BreezeStore", "BreezeCLI", "CFaultVFS"], path: "tools/breeze-torture"),
        .executableTarget(name: "breeze-proxy", dependencies: ["BreezeSync", "BreezeCore"], path: "tools/breeze-proxy"),
        .target(name: "BreezeTestSupport", path: "Tests/BreezeTestSupport"),
        .testTarget(name: "BreezeCoreTests", dependencies: ["BreezeCore", "BreezeCrypto", "BreezeTestSupport"]),
        .testTarget(name: "BreezeAirQualityTests", dependencies: ["BreezeAirQuality", "BreezeCore"],
                    resources: [.copy("Fixtures")]),
        .testTarget(name: "BreezeStoreTests", dependencies: ["BreezeStore", "BreezeCore", "BreezeCrypto", "BreezeTestSupport"]),
        .testTarget(name: "BreezeSyncTests", dependencies: ["BreezeSync", "BreezeCore", "BreezeCrypto", "BreezeTestSupport"]),
        .testTarget(name: "BreezeNetTests", dependencies: ["BreezeNet", "BreezeSync", "BreezeStore", "BreezeCore", "BreezeCrypto", "BreezeAirQuality", "BreezeTestSupport"]),
        .testTarget(name: "BreezeImportTests", dependencies: ["BreezeImport", "BreezeCore"], resources: [.copy("Fixtures")]),
        .testTarget(name: "BreezeProjectionsTests", dependencies: ["BreezeProjections", "BreezeCore", "BreezeAirQuality", "BreezeImport"],
                    resources: [.copy("Fixtures")]),
        .testTarget(name: "BreezeDiskFaultTests", dependencies: ["BreezeStore", "BreezeCore", "BreezeTestSupport"]),
        .testTarget(name: "BreezeTests", dependencies: ["Breeze", "BreezeStore", "BreezeFeeds", "BreezeTestSupport"]),
        // The inspector in a real headless Chromium, its server over plain HTTP, and real nodes' metrics.
        .testTarget(name: "BreezeInspectTests", dependencies: ["BreezeTestSupport"]),
        .testTarget(name: "BreezeCLITests", dependencies: ["BreezeCLI", "Breeze", "BreezeStore", "BreezeCore", "BreezeCrypto", "BreezeSync", "BreezeImport", "BreezeProjections",
                                                       "BreezeTestSupport"]),
    ]
)

// Fuzz targets (tools/fuzz, libFuzzer): declared only when asked, by `tools/fuzz.sh` (`BREEZE_FUZZ=1 swift build
// --sanitize fuzzer --scratch-path .build/fuzz`), so normal builds neither build them nor link libFuzzer.
if Context.environment["BREEZE_FUZZ"] == "1" {
    package.targets += [
        .target(name: "FuzzSupport", path: "tools/fuzz/FuzzSupport"),
        .executableTarget(name: "fuzz-frame", dependencies: ["BreezeSync", "FuzzSupport"], path: "tools/fuzz/frame"),
        .executableTarget(name: "fuzz-session", dependencies: ["BreezeSync", "BreezeCore", "FuzzSupport"], path: "tools/fuzz/session"),
        .executableTarget(name: "fuzz-event", dependencies: ["BreezeCore", "FuzzSupport"], path: "tools/fuzz/event"),
        .executableTarget(name: "fuzz-import", dependencies: ["BreezeImport", "BreezeCore", "FuzzSupport"], path: "tools/fuzz/import"),
    ]
}

// Strictness for every Swift target, in one place (as swift-log does).
for target in package.targets where target.type != .system && target.name != "CFaultVFS" {
    var settings = target.swiftSettings ?? []
    settings.append(.swiftLanguageMode(.v6))
    settings.append(.enableUpcomingFeature("InternalImportsByDefault"))
    target.swiftSettings = settings
}
