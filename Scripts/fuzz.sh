#!/usr/bin/env bash
# Builds the libFuzzer harnesses in Fuzz/ (with --sanitize fuzzer and address) and runs each for
# FUZZ_SECONDS seconds (default 60) on its corpus in Fuzz/corpus/<harness>/, built first by
# Fuzz/make_corpus.py when missing. Fails when any harness finds a crash, a leak or a timeout; the
# input that did it is written to Fuzz/artifacts/<harness>/. See docs/FUZZING.md.
#
# Usage: Scripts/fuzz.sh [harness...]        (default: every harness)
# Environment: FUZZ_SECONDS (per harness), FUZZ_TIMEOUT (seconds one input may take, default 10),
# FUZZ_FLAGS (more libFuzzer flags, e.g. "-jobs=1 -workers=1"), FUZZ_LOG (folder for the logs).
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${FUZZ_SECONDS:-60}
timeout=${FUZZ_TIMEOUT:-10}
harnesses=("$@")
[ ${#harnesses[@]} -gt 0 ] || harnesses=(fuzz-json fuzz-ndjson fuzz-rules fuzz-plans fuzz-schema fuzz-regex fuzz-archive fuzz-base64)

# Release, with AddressSanitizer and libFuzzer's coverage instrumentation in every module (Swift and
# C), testable imports (fuzz-regex reaches the engine's internal parts), and libFuzzer without its own
# main: each harness's main calls LLVMFuzzerRunDriver. (`--sanitize fuzzer` would link libFuzzer's main,
# which clashes with the harness's.)
runtime="$(dirname "$(readlink -f "$(command -v swiftc)")")/../lib/swift/clang/lib/linux/libclang_rt.fuzzer_no_main-$(uname -m).a"
[ -f "$runtime" ] || { echo "fuzz: $runtime is missing: this Swift toolchain has no libFuzzer (see Scripts/setup.sh)" >&2; exit 2; }
coverage=edge,inline-8bit-counters,pc-table,trace-cmp
build=(swift build --package-path Fuzz -c release --sanitize address -Xswiftc -enable-testing
    -Xswiftc -sanitize-coverage=$coverage -Xcc -fsanitize-coverage=$coverage -Xlinker "$runtime" -Xlinker -lstdc++)
"${build[@]}"
bin=$("${build[@]}" --show-bin-path)
[ -d Fuzz/corpus ] || python3 Fuzz/make_corpus.py

# A Swift runtime failure is then reported by libFuzzer with its stack: Swift's own backtracer, run
# under AddressSanitizer, crashes itself and hides the failure.
export SWIFT_BACKTRACE=enable=no
log=${FUZZ_LOG:-Fuzz/logs}
mkdir -p "$log"
failed=()
for h in "${harnesses[@]}"; do
    mkdir -p "Fuzz/corpus/$h" "Fuzz/artifacts/$h"
    echo "fuzz: $h for ${seconds}s" >&2
    # A crash, a leak (LeakSanitizer) or an input over -timeout ends the run with a non-zero status.
    # shellcheck disable=SC2086
    if ! "$bin/$h" "Fuzz/corpus/$h" -max_total_time="$seconds" -timeout="$timeout" -rss_limit_mb=2560 \
        -print_final_stats=1 -artifact_prefix="Fuzz/artifacts/$h/" ${FUZZ_FLAGS:-} > "$log/$h.log" 2>&1; then
        failed+=("$h")
        echo "fuzz: $h FAILED (log: $log/$h.log; input: Fuzz/artifacts/$h/)" >&2
        grep -E '^(==[0-9]+==|SUMMARY)|Fatal error|Precondition failed|runtime failure|^    #[0-9] ' "$log/$h.log" | head -20 >&2 || true
    fi
    # The last status line: executions, coverage (cov), features (ft), corpus size, exec/s.
    grep -E '^#[0-9]+' "$log/$h.log" | tail -1 >&2 || true
    grep -E '^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)' "$log/$h.log" >&2 || true
done
if [ ${#failed[@]} -gt 0 ]; then
    echo "fuzz: failed: ${failed[*]}" >&2
    exit 1
fi
echo "fuzz: ${#harnesses[@]} harnesses ran ${seconds}s each, nothing found" >&2
