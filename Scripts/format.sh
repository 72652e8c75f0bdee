#!/usr/bin/env bash
# Formats the Swift sources in place with swift-format (config: .swift-format), then lints them.
# `Scripts/format.sh --check` only lints and fails on findings.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" != "--check" ]; then
    swift format format --in-place --recursive --parallel Sources Tests Package.swift Fuzz/Package.swift Fuzz/Sources
fi
swift format lint --strict --recursive --parallel Sources Tests Package.swift Fuzz/Package.swift Fuzz/Sources
