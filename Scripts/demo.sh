#!/usr/bin/env bash
# The main job on the samples: installs what is missing, builds dumpkit, and migrates the todolist
# sample app's v1 dump to v2 (then checks the result and rolls it back). Outputs go to demo-out/.
set -euo pipefail
cd "$(dirname "$0")/.."

Scripts/setup.sh
swift build -c release --product dumpkit
dumpkit=.build/release/dumpkit
out=demo-out
mkdir -p "$out"

input=samples/todolist/v1.json
plan=schemas/todolist/plan.yaml

echo "== What is in $input"
"$dumpkit" stats "$input"

echo
echo "== Dry run of $plan"
"$dumpkit" migrate "$input" --plan "$plan" --on-error keep --dry-run

echo
echo "== Migration v1 -> v2 (values that cannot be migrated are kept and listed in the rejects file)"
"$dumpkit" migrate "$input" -o "$out/todolist.v2.json" --plan "$plan" --on-error keep \
    --report "$out/todolist.report.json" --canonical --pretty

echo
echo "== Rollback v2 -> v1"
"$dumpkit" migrate "$out/todolist.v2.json" -o "$out/todolist.v1.json" --plan "$plan" --reverse --on-error keep \
    --rejects "$out/todolist.reverse.rejects.ndjson"

echo
echo "Outputs are in $out/: todolist.v2.json, its rejects and report, and the rolled-back todolist.v1.json."
