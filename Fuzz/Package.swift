// swift-tools-version:6.0
import PackageDescription

/// libFuzzer harnesses for DumpKit, one executable per target. A package of its own so that the
/// root package's build never sees them; `Scripts/fuzz.sh` (or `make fuzz`) builds them with
/// AddressSanitizer and libFuzzer's instrumentation and runs them. See docs/FUZZING.md.
let harnesses: [(name: String, dependencies: [Target.Dependency])] = [
    ("fuzz-json", [.product(name: "JSONStream", package: "DumpKit")]),
    ("fuzz-ndjson", [.product(name: "DumpKit", package: "DumpKit"), .product(name: "JSONStream", package: "DumpKit")]),
    ("fuzz-rules", [.product(name: "FirebaseRules", package: "DumpKit"), .product(name: "JSONStream", package: "DumpKit")]),
    ("fuzz-plans", [.product(name: "DumpKit", package: "DumpKit"), .product(name: "JSONStream", package: "DumpKit")]),
    ("fuzz-schema", [.product(name: "JSONSchema", package: "DumpKit"), .product(name: "JSONStream", package: "DumpKit")]),
    ("fuzz-regex", [.product(name: "RegexEngine", package: "DumpKit"), .product(name: "FirebaseRules", package: "DumpKit")]),
    ("fuzz-archive", [.product(name: "DumpKit", package: "DumpKit"), .product(name: "JSONStream", package: "DumpKit")]),
    ("fuzz-base64", [.product(name: "DumpKit", package: "DumpKit")]),
]

let package = Package(
    name: "DumpKitFuzz",
    dependencies: [.package(name: "DumpKit", path: "..")],
    targets: [
        .target(name: "CLibFuzzer"),
        .target(name: "FuzzSupport", dependencies: ["CLibFuzzer"]),
    ]
        + harnesses.map { h in
            .executableTarget(name: h.name, dependencies: ["FuzzSupport"] + h.dependencies, path: "Sources/\(h.name)")
        },
    swiftLanguageModes: [.v6]
)
