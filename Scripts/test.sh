#!/usr/bin/env bash
# Runs every test: installs missing system packages, builds, runs the Swift test suites, builds the
# DocC documentation (it must keep building), then the benchmark scripts at a tiny size (they must
# keep working; timings are never asserted).
set -euo pipefail
cd "$(dirname "$0")/.."

Scripts/setup.sh
swift build --build-tests
swift test --skip-build
Scripts/test_install.sh
swift package generate-documentation --target DumpKit
if [ -f Benchmarks/bench.py ]; then
    swift build -c release --product dumpkit
    python3 Scripts/test_gen_dataset.py
    python3 Benchmarks/bench.py --size 5MB --runs 1 --dumpkit .build/release/dumpkit
fi
