#!/usr/bin/env bash
# The main job on the samples: installs what is missing, builds dumpkit, and runs it on the todolist
# sample app's v1 dump. Outputs go to demo-out/.
set -euo pipefail
cd "$(dirname "$0")/.."

Scripts/setup.sh
swift build -c release --product dumpkit
dumpkit=.build/release/dumpkit
out=demo-out
mkdir -p "$out"

input=samples/todolist/v1.json
echo "== What is in $input"
"$dumpkit" stats "$input"

echo
echo "== Records as NDJSON, canonical, zstd-compressed"
"$dumpkit" convert "$input" -o "$out/todolist.v1.ndjson.zst" --records '/v1/todolist/{id}' --canonical

echo
echo "== And back to one canonical tree"
"$dumpkit" convert "$out/todolist.v1.ndjson.zst" -o "$out/todolist.v1.canonical.json" --canonical --pretty
echo "Outputs are in $out/."
