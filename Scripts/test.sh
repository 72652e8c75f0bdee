#!/usr/bin/env bash
# Runs every test: installs missing system packages, fails on unformatted Swift code (Scripts/format.sh
# --check: `make format` formats it), builds, runs the Swift test suites, runs each
# fuzz harness briefly (Fuzz/, docs/FUZZING.md: FUZZ_SECONDS, 15 by default, fails on any crash, leak
# or timeout), builds the DocC documentation (it must keep building), then the benchmark scripts at a
# tiny size (they must keep working; timings are never asserted).
set -euo pipefail
cd "$(dirname "$0")/.."

Scripts/setup.sh
Scripts/format.sh --check
swift build --build-tests
swift test --skip-build
FUZZ_SECONDS=${FUZZ_SECONDS:-15} Scripts/fuzz.sh
Scripts/test_install.sh
swift package generate-documentation --target DumpKit
if [ -f Benchmarks/bench.py ]; then
    swift build -c release --product dumpkit
    python3 Scripts/test_gen_dataset.py
    python3 Benchmarks/bench.py --size 5MB --runs 1 --dumpkit .build/release/dumpkit
fi
