#!/usr/bin/env bash
# The main job end to end on the samples: installs what is missing, builds dumpkit, then on
# samples/todolist: stats (and an HTML picture of the dump), a dry run, the migration v1 -> v2 with the
# inline images moved into a bucket folder, validation of v2 against its schema and the bucket, an
# archive of the bucket restored and compared, and the rollback v2 -> v1 compared with the input;
# briefly the same trip for samples/wedding. Every comparison must hold: the script exits 1 if one
# does not. Outputs go to demo-out/ (DEMO_OUT). DUMPKIT=path/to/dumpkit skips set-up and build.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -z "${DUMPKIT:-}" ]; then
    Scripts/setup.sh
    swift build -c release --product dumpkit
    DUMPKIT=.build/release/dumpkit
fi
dumpkit() { "$DUMPKIT" "$@"; }
out=${DEMO_OUT:-demo-out}
rm -rf "$out"
mkdir -p "$out"
start=$(date +%s%N)

step() { printf '\n== %s\n' "$*"; }
ok() { printf '   ok: %s\n' "$*"; }
fail() { printf '   FAILED: %s\n' "$*" >&2; exit 1; }
# The same JSON (members in any order, any formatting): canonical forms compared byte for byte.
same_json() {
    dumpkit convert "$1" --canonical -o "$out/.a.json" 2>/dev/null
    dumpkit convert "$2" --canonical -o "$out/.b.json" 2>/dev/null
    cmp -s "$out/.a.json" "$out/.b.json" || fail "$1 and $2 differ (diff $out/.a.json $out/.b.json)"
    rm -f "$out/.a.json" "$out/.b.json"
}

app=todolist
v1=samples/$app/v1.json
plan=schemas/$app/plan.yaml
images=schemas/$app/images.yaml
bucket=salada-todo.appspot.com

step "1. stats of $v1"
dumpkit stats "$v1" --html "$out/$app.v1.stats.html" --json > "$out/$app.v1.stats.json"
jq -r '"   \(.bytes) bytes, \(.patterns | length) path patterns, \(.base64Images.count) inline base64 images (\(.base64Images.bytes) bytes); record patterns: \(.recordPatterns | join(" "))"' \
    "$out/$app.v1.stats.json"
jq -e '.recordPatterns | index("/v1/todolist/{id}")' "$out/$app.v1.stats.json" >/dev/null || fail "stats does not suggest the plan's pattern"
ok "the plan's pattern /v1/todolist/{id} is suggested; the picture is $out/$app.v1.stats.html"

step "2. dry run of $plan + $images"
dumpkit migrate "$v1" --plan "$plan" --plan "$images" --bucket "$bucket" --on-error keep --dry-run > "$out/$app.dry-run.txt"
sed -n '2p' "$out/$app.dry-run.txt" | sed 's/^/   /'
grep '^extract-blobs steps:' "$out/$app.dry-run.txt" | sed 's/^/   /'

step "3. migration v1 -> v2, the inline images moved into $out/bucket (download tokens in the metadata, Salada Files in the dump)"
dumpkit migrate "$v1" -o "$out/$app.v2.json" --plan "$plan" --plan "$images" --on-error keep \
    --blobs "$out/bucket" --bucket "$bucket" --report "$out/$app.report.json" --pretty 2> "$out/$app.migrate.txt"
sed -n '1,2p' "$out/$app.migrate.txt" | sed 's/^/   /'
if grep -q '"data:image' "$out/$app.v2.json"; then fail "an inline image is left in $out/$app.v2.json"; fi
objects=$(find "$out/bucket" -path "$out/bucket/.dumpkit" -prune -o -type f -print | wc -l)
tokens=$(cat "$out"/bucket/.dumpkit/meta/*/*.json | jq -r '.metadata.firebaseStorageDownloadTokens' | grep -c . || true)
[ "$objects" -gt 0 ] && [ "$objects" -eq "$tokens" ] || fail "$objects objects but $tokens download tokens"
files=$(jq '[.v2.todolist[].images[]? | objects | select((.url // "") | contains("/o/v2%2Ftodolist%2F"))] | length' "$out/$app.v2.json")
[ "$files" -eq "$objects" ] || fail "$files Salada Files name the $objects objects"
ok "$objects objects in $out/bucket, each with its download token, named by $files Salada Files; no data: URI left"

step "4. validate v2 against schemas/$app/v2.schema.json and the bucket"
set +e
dumpkit validate "$out/$app.v2.json" --schema "/v2/todolist/{id}=schemas/$app/v2.schema.json" --format json > "$out/$app.validate-schema.json"
dumpkit validate "$out/$app.v2.json" --blobs "$out/bucket" --ref-style salada --format json > "$out/$app.validate-blobs.json"
set -e
# The schema findings must be exactly the values the migration kept as they were (--on-error keep)
# and listed in its rejects file: each finding at or below a reject's output pointer, each
# reject found. samples/README.md lists these four odd values.
jq -r '.findings[].pointer' "$out/$app.validate-schema.json" | sort > "$out/.findings"
jq -r '.outputPointer' "$out/$app.v2.json.rejects.ndjson" | sort > "$out/.rejects"
while read -r f; do
    grep -qxF -e "$f" -e "${f%/*}" "$out/.rejects" || fail "schema finding $f is not a value the migration kept"
done < "$out/.findings"
while read -r r; do
    awk -v r="$r" '$0 == r || index($0, r "/") == 1 { found = 1 } END { exit !found }' "$out/.findings" ||
        fail "the kept value $r is not found by the schema"
done < "$out/.rejects"
echo "   schema: $(wc -l < "$out/.findings") findings, exactly the $(wc -l < "$out/.rejects") values the migration kept and listed in $out/$app.v2.json.rejects.ndjson"
rm -f "$out/.findings" "$out/.rejects"
# The blob references the migration wrote (objects under v2/) must all check out: present, same size,
# hashes and type, and a token the object's metadata holds. The sample's older Salada Files (objects
# under v1/ of the app's real bucket, which the sample does not include) can only be missing here.
extracted=$(jq '[.findings[] | select(.message | contains("\"v2/"))] | length' "$out/$app.validate-blobs.json")
other=$(jq '[.findings[] | select((.message | contains("\"v1/")) and .rule == "blobs:missing" | not)] | length' "$out/$app.validate-blobs.json")
older=$(jq '[.findings[] | select(.rule == "blobs:missing")] | length' "$out/$app.validate-blobs.json")
[ "$extracted" -eq 0 ] && [ "$other" -eq 0 ] || fail "blob findings: see $out/$app.validate-blobs.json"
echo "   bucket: no finding for the $objects references the migration wrote; $older older Salada Files point to v1/ objects of the app's bucket, not in the sample"

step "5. archive of the bucket, verify, restore into a fresh folder, compare"
dumpkit archive "$out/bucket" -o "$out/bucket.tar.zst" 2>&1 | sed 's/^/   /'
dumpkit verify "$out/bucket.tar.zst" | sed 's/^/   /'
dumpkit restore "$out/bucket.tar.zst" "$out/bucket-restored" 2>&1 | sed 's/^/   /'
diff -r -x .dumpkit "$out/bucket" "$out/bucket-restored" || fail "the restored objects differ"
# Metadata sidecars: the same, but for the modification time (updated) the archive records per object.
for meta in "$out"/bucket/.dumpkit/meta/*/*.json; do
    restored=$out/bucket-restored/.dumpkit/meta/${meta#"$out/bucket/.dumpkit/meta/"}
    [ "$(jq -cS 'del(.updated)' "$meta")" = "$(jq -cS 'del(.updated)' "$restored")" ] || fail "metadata of $meta differs"
done
ok "diff -r: the restored objects are the bucket's, and their metadata (download tokens included)"

step "6. rollback v2 -> v1: images back inline, then the plan reversed"
dumpkit inline-blobs "$out/$app.v2.json" -o "$out/$app.v2.inline.json" --blobs "$out/bucket" --ref-style salada 2>&1 | sed 's/^/   /'
dumpkit migrate "$out/$app.v2.inline.json" -o "$out/$app.v1.json" --plan "$plan" --reverse --on-error keep \
    --rejects "$out/$app.reverse.rejects.ndjson" 2>&1 | sed 's/^/   /'
same_json "$v1" "$out/$app.v1.json"
ok "$out/$app.v1.json is JSON-equal to $v1"

wedding=samples/wedding
step "7. briefly, $wedding: migration and rollback, its Storage bucket archived and restored"
dumpkit migrate "$wedding/v1.json" -o "$out/wedding.v2.json" --plan schemas/wedding/plan.yaml --on-error keep 2>&1 | sed 's/^/   /'
dumpkit migrate "$out/wedding.v2.json" -o "$out/wedding.v1.json" --plan schemas/wedding/plan.yaml --reverse --on-error keep \
    --rejects "$out/wedding.reverse.rejects.ndjson" 2>&1 | sed 's/^/   /'
same_json "$wedding/v1.json" "$out/wedding.v1.json"
ok "$out/wedding.v1.json is JSON-equal to $wedding/v1.json"
dumpkit archive "$wedding/bucket" -o "$out/wedding-bucket.tar.zst" 2>&1 | sed 's/^/   /'
dumpkit verify "$out/wedding-bucket.tar.zst" > /dev/null
dumpkit restore "$out/wedding-bucket.tar.zst" "$out/wedding-bucket-restored" > /dev/null 2>&1
diff -r "$wedding/bucket" "$out/wedding-bucket-restored" || fail "the restored wedding bucket differs"
ok "verified; diff -r: the restored bucket is $wedding/bucket"

printf '\n== Done in %s s (after the build). Written to %s/:\n' "$(awk -v a="$start" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')" "$out"
for f in "$out"/*; do
    if [ -d "$f" ]; then
        echo "   $(basename "$f")/: $(find "$f" -path "$f/.dumpkit" -prune -o -type f -print | wc -l) objects$([ -d "$f/.dumpkit" ] && echo " and their metadata in .dumpkit/")"
    else
        echo "   $(basename "$f")"
    fi
done
