#!/bin/bash
# Export and import of a large dataset against rtdb-test-server, by hand (docs/LIVE-DATABASE.md,
# "Memory and speed"): bench.py's import job also runs the Python peer, which loads the whole dump
# (about 10 GB of memory at 1 GB), so the 1 GB and 2 GB figures come from this script.
#
#   swift build -c release --product dumpkit && swift build -c release --product rtdb-test-server
#   Scripts/gen_dataset.py todolist --size 1GB --seed 1 -o bench-data/todolist-1GB-s1.json
#   Benchmarks/rtdb_round_trip.sh bench-data/todolist-1GB-s1.json [verify]
#
# Exports from a server loaded with DATA (compared with DATA byte for byte: the generator writes the
# database's key order), imports that export into an empty server, and with `verify` exports the
# result again and compares it too. dumpkit's wall time, CPU and peak memory from /usr/bin/time -v;
# the server's CPU from /proc/PID/stat. The server holds about 3.7 GB per GB of data.
set -u
DATA=$1; VERIFY=${2:-}
REPO=$(cd "$(dirname "$0")/.." && pwd)
BIN=${BIN:-$REPO/.build/release}
mkdir -p "$REPO/bench-data"
OUT=$(mktemp -d "$REPO/bench-data/round-trip.XXXXXX")
cpu() { awk '{print ($14+$15)/100}' /proc/$1/stat; }
start() {
    "$BIN/rtdb-test-server" --namespace bench "$@" > "$OUT/host" &
    SERVER=$!
    HOST=
    while [ -z "$HOST" ]; do
        sleep 1
        kill -0 $SERVER || { echo "rtdb-test-server ended"; exit 1; }
        HOST=$(grep -m1 127.0.0.1 "$OUT/host")
    done
}
stop() { kill $SERVER; wait $SERVER 2>/dev/null; }
timed() { # timed NAME ARGS...: dumpkit ARGS with the server's address, its figures printed
    local name=$1; shift
    local before; before=$(cpu $SERVER)
    /usr/bin/time -v env FIREBASE_DATABASE_EMULATOR_HOST="$HOST" "$BIN/dumpkit" "$@" > "$OUT/$name.json" 2> "$OUT/$name.time"
    echo "$name: exit $?, server CPU $(echo "$(cpu $SERVER) - $before" | bc) s"
    grep -E "Elapsed|Maximum resident|User time|System time" "$OUT/$name.time"
}
start --load "$DATA"
timed export export https://bench.firebaseio.com -o "$OUT/export.json" --json
cmp "$DATA" "$OUT/export.json" && echo "export: the dataset's bytes"
stop
start
timed import import "$OUT/export.json" https://bench.firebaseio.com --json
if [ -n "$VERIFY" ]; then
    env FIREBASE_DATABASE_EMULATOR_HOST="$HOST" "$BIN/dumpkit" export https://bench.firebaseio.com -o "$OUT/again.json" -q &&
        cmp "$DATA" "$OUT/again.json" && echo "import -> export: the dataset's bytes"
fi
stop
rm -rf "$OUT"
