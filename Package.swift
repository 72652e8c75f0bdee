// swift-tools-version:6.0
import PackageDescription

// Linux only: the code calls Glibc and Linux system calls (O_TMPFILE, openat2, syncfs,
// sync_file_range, OFD locks) directly, and is built and tested on Linux alone.
let package = Package(
    name: "DumpKit",
    products: [
        .library(name: "DumpKit", targets: ["DumpKit"]),
        .library(name: "JSONStream", targets: ["JSONStream"]),
        .library(name: "ArchiveKit", targets: ["ArchiveKit"]),
        .library(name: "JSONSchema", targets: ["JSONSchema"]),
        .library(name: "FirebaseRules", targets: ["FirebaseRules"]),
        .library(name: "RegexEngine", targets: ["RegexEngine"]),
        .library(name: "LiveDatabase", targets: ["LiveDatabase"]),
        .library(name: "CloudHTTP", targets: ["CloudHTTP"]),
        .library(name: "ObjectStores", targets: ["ObjectStores"]),
        .executable(name: "dumpkit", targets: ["dumpkit"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.0.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.0.0"),
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.81.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CArchive",
            pkgConfig: "libarchive",
            providers: [.apt(["libarchive-dev"])]
        ),
        .systemLibrary(
            name: "CZstd",
            pkgConfig: "libzstd",
            providers: [.apt(["libzstd-dev"])]
        ),
        .target(name: "Workers"),
        .target(name: "ArchiveKit", dependencies: ["CArchive", "CZstd", "Workers"]),
        .target(name: "JSONStream", dependencies: ["CPlatform"]),
        .target(name: "CPlatform"),
        .target(name: "RegexEngine"),
        .target(name: "JSONSchema", dependencies: ["JSONStream", "RegexEngine"]),
        .target(name: "FirebaseRules", dependencies: ["JSONStream", "RegexEngine"]),
        .target(
            name: "DumpKit",
            dependencies: [
                "JSONStream",
                "ArchiveKit",
                "Workers",
                "CPlatform",
                "RegexEngine",
                "JSONSchema",
                "FirebaseRules",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Yams", package: "Yams"),
            ]
        ),
        .target(
            name: "LiveDatabase",
            dependencies: [
                "ArchiveKit",
                "DumpKit",
                "JSONStream",
                "CloudHTTP",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        .target(
            name: "CloudHTTP",
            dependencies: [
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ]
        ),
        .target(
            name: "ObjectStores",
            dependencies: [
                "DumpKit",
                "CloudHTTP",
                "CPlatform",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .executableTarget(
            name: "dumpkit",
            dependencies: [
                "DumpKit",
                "FirebaseRules",
                "LiveDatabase",
                "ObjectStores",
                "CloudHTTP",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .target(
            name: "RTDBTestServer",
            dependencies: [
                "JSONStream",
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "Tests/RTDBTestServer"
        ),
        .executableTarget(name: "rtdb-test-server", dependencies: ["RTDBTestServer"], path: "Tests/RTDBTestServerMain"),
        .target(name: "TestSupport", path: "Tests/TestSupport"),
        .testTarget(name: "JSONStreamTests", dependencies: ["JSONStream", "TestSupport"]),
        .testTarget(name: "RegexEngineTests", dependencies: ["RegexEngine"]),
        .testTarget(name: "JSONSchemaTests", dependencies: ["JSONSchema", "JSONStream", "TestSupport"]),
        .testTarget(name: "FirebaseRulesTests", dependencies: ["FirebaseRules", "JSONStream", "TestSupport"]),
        .testTarget(name: "ArchiveKitTests", dependencies: ["ArchiveKit", "Workers", "CZstd", "TestSupport"]),
        .testTarget(
            name: "DumpKitTests",
            dependencies: ["DumpKit", "Workers", "CPlatform", "TestSupport", .product(name: "Crypto", package: "swift-crypto")]
        ),
        .testTarget(name: "CLITests", dependencies: ["dumpkit", "TestSupport", "RTDBTestServer"]),
        .testTarget(
            name: "LiveDatabaseTests",
            dependencies: [
                "LiveDatabase", "CloudHTTP", "DumpKit", "JSONStream", "RTDBTestServer", "TestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "RTDBTestServerTests",
            dependencies: [
                "RTDBTestServer", "JSONStream", "TestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "CloudHTTPTests",
            dependencies: [
                "CloudHTTP", "TestSupport", .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "Crypto", package: "swift-crypto"), .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "ObjectStoresTests",
            dependencies: [
                "ObjectStores", "CloudHTTP", "DumpKit", "dumpkit", "TestSupport", .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
