#!/usr/bin/env python3
"""Sharded runs on one machine, measured for the model in docs/SCALE-OUT.md.

Usage:
  python3 Benchmarks/shard_bench.py --input bench-data/todolist-1GB-s1.json [--shards 16]
                                    [--dumpkit .build/release/dumpkit] [--work /tmp/shard-bench]
  python3 Benchmarks/shard_bench.py --input bench-data/images-200MB-s1.json --commands extract-blobs

With a folder as `--input` (a bucket from `Scripts/gen_dataset.py bucket`), it measures `archive`:
the unsharded archive, `index --bucket`, the shards and the merge, whose archive must hold the
unsharded manifest and the same tar bytes after it.

`--commands` picks the measures (default: convert, convert-records, migrate, validate; also
extract-blobs, for a dump with images from `Scripts/gen_dataset.py images`: the unsharded run and the
shards write to fresh stores, and the merged store must equal the unsharded one file for file).

For `convert` (JSON tree, compact), `migrate` (the todolist plan without its move, --on-error
keep) and `validate` (limits and the todolist v1 schema; its report is what merge prints) it times, each right after a read of the input into the page cache: the unsharded run, the
index pass, every shard of N one after another (so each has the machine to itself, as it would on
a machine of its own), and the merge; and checks that the merged output is the unsharded one byte
for byte. CPU is user+sys from os.wait4. The model for N machines is index + largest shard + merge
(the shards run side by side; copying the input and the parts between machines is not counted),
against the unsharded run on one machine. Nothing is asserted: the exit status is 1 only if a
command fails or an output differs.
"""

from __future__ import annotations

import argparse
import filecmp
import os
import shutil
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(argv: list[str], stdout: str | None = None) -> tuple[float, float]:
    """Runs argv (standard output to the file `stdout`, if given); returns (wall seconds, CPU
    seconds). Exit status 1 is a success for validate and for merging its parts (error findings)."""
    start = time.monotonic()
    out = open(stdout, "wb") if stdout else subprocess.DEVNULL
    p = subprocess.Popen(argv, stdout=out, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.monotonic() - start
    if stdout:
        out.close()
    err = p.stderr.read().decode() if p.stderr else ""
    code = os.waitstatus_to_exitcode(status)
    if code != 0 and not (code == 1 and stdout):
        sys.exit(f"failed: {' '.join(argv)}\n{err}")
    return wall, usage.ru_utime + usage.ru_stime


def warm(path: str) -> None:
    with open(path, "rb") as f:
        while f.read(1 << 24):
            pass


def store_files(root: str) -> dict[str, bytes]:
    """A blob store's objects and metadata by relative path (not the lock file or run folders)."""
    out = {}
    for folder, _, files in os.walk(root):
        for name in files:
            path = os.path.join(folder, name)
            rel = os.path.relpath(path, root)
            if rel == os.path.join(".dumpkit", "lock") or rel.startswith(os.path.join(".dumpkit", "tmp")):
                continue
            with open(path, "rb") as f:
                out[rel] = f.read()
    return out


def measure(name: str, command: list[str], index_args: list[str], args, size: int, store: bool = False) -> list[str]:
    work = os.path.join(args.work, name)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    one_command, shard_command = command, command
    if store:
        one_command = command + ["--blobs", os.path.join(work, "reference-store")]
        shard_command = command + ["--blobs", os.path.join(work, "store")]
    ref = os.path.join(work, "reference.json")
    out = os.path.join(work, "sharded.json")
    index = os.path.join(work, "input.dkindex")
    validate = command[0] == "validate"
    warm(args.input)
    if validate:
        one_wall, one_cpu = run([args.dumpkit] + command + [args.input, "--format", "json", "-q"], stdout=ref)
    else:
        one_wall, one_cpu = run([args.dumpkit] + one_command + [args.input, "-o", ref, "-q"])
    warm(args.input)
    index_wall, index_cpu = run([args.dumpkit, "index", args.input, "-o", index, "-q"] + index_args)
    shards = []
    for i in range(args.shards):
        warm(args.input)
        shards.append(
            run([args.dumpkit] + shard_command + [args.input, "-o", out, "--index", index, "--shard", f"{i}/{args.shards}", "-q"]))
    if validate:
        merge_wall, merge_cpu = run([args.dumpkit, "merge", out, "--format", "json", "-q"], stdout=out + ".report")
        same = filecmp.cmp(ref, out + ".report", shallow=False)
    else:
        merge_wall, merge_cpu = run([args.dumpkit, "merge", out, "-q"])
        same = filecmp.cmp(ref, out, shallow=False)
    if command[0] == "migrate":
        same = same and filecmp.cmp(ref + ".rejects.ndjson", out + ".rejects.ndjson", shallow=False)
    if store:
        same = same and store_files(os.path.join(work, "reference-store")) == store_files(os.path.join(work, "store"))
    walls = [w for w, _ in shards]
    cpus = [c for _, c in shards]
    mb = size / 1e6
    model = index_wall + max(walls) + merge_wall
    lines = [
        f"### {name}: `dumpkit {' '.join(command)}`, index `{' '.join(index_args) or '(defaults)'}`",
        "",
        "| measure | value |",
        "| --- | --- |",
        f"| unsharded run (1 machine) | {one_wall:.2f} s wall, {one_cpu:.2f} s CPU ({mb / one_wall:.0f} MB/s) |",
        f"| index pass | {index_wall:.2f} s wall, {index_cpu:.2f} s CPU ({mb / index_wall:.0f} MB/s), index {os.path.getsize(index) / 1e6:.1f} MB |",
        f"| {args.shards} shards one after another | each {min(walls):.2f}-{max(walls):.2f} s wall (mean {sum(walls) / len(walls):.2f}), CPU {sum(cpus):.2f} s in all |",
        f"| merge | {merge_wall:.2f} s wall, {merge_cpu:.2f} s CPU |",
        f"| shards' CPU against the unsharded run's | {sum(cpus) / one_cpu:.2f}x (with the merge: {(sum(cpus) + merge_cpu) / one_cpu:.2f}x; and the index pass: {(sum(cpus) + merge_cpu + index_cpu) / one_cpu:.2f}x) |",
        f"| modelled wall time on {args.shards} machines (index + largest shard + merge) | {model:.2f} s, against {one_wall:.2f} s on one ({one_wall / model:.1f}x faster) |",
        f"| extrapolated to 50 GB (x{50e9 / size:.0f}, every step linear in bytes) | {model * 50e9 / size:.0f} s on {args.shards} machines, {one_wall * 50e9 / size:.0f} s on one |",
        f"| merged output{' and store' if store else ''} identical to the unsharded one | {'yes' if same else 'NO'} |",
        "",
        "Per shard (wall s): " + ", ".join(f"{w:.2f}" for w in walls),
        "",
    ]
    print("\n".join(lines), flush=True)
    if not same:
        sys.exit(f"{name}: the merged output differs from the unsharded one")
    shutil.rmtree(work, ignore_errors=True)
    return lines


def tar_after_manifest(archive: str) -> tuple[bytes, bytes]:
    """The manifest (JSON, without the padding an unsharded archive has) and the decompressed tar after
    the manifest's entry."""
    tar = subprocess.run(["zstd", "-dc", archive], check=True, capture_output=True).stdout
    offset = 0

    def size(at: int) -> int:
        return int(tar[at + 124:at + 136].strip(b"\0 ") or b"0", 8)

    while tar[offset + 156:offset + 157] == b"x":
        offset += 512 + (size(offset) + 511) // 512 * 512
    n = size(offset)
    return tar[offset + 512:offset + 512 + n].rstrip(b" \n"), tar[offset + 512 + (n + 511) // 512 * 512:]


def warm_folder(root: str) -> None:
    for folder, _, files in os.walk(root):
        for name in files:
            warm(os.path.join(folder, name))


def measure_archive(args) -> list[str]:
    """`archive` of a bucket folder: unsharded, `index --bucket`, N shards one after another, merge;
    the merged archive must hold the unsharded one's manifest and, after it, the same tar bytes."""
    work = os.path.join(args.work, "archive")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    ref, out, index = os.path.join(work, "reference.tar.zst"), os.path.join(work, "sharded.tar.zst"), os.path.join(work, "bucket.dkindex")
    size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(args.input) for f in fs)
    count = sum(len(fs) for _, _, fs in os.walk(args.input))
    warm_folder(args.input)
    one_wall, one_cpu = run([args.dumpkit, "archive", args.input, "-o", ref, "-q"])
    index_wall, index_cpu = run([args.dumpkit, "index", "--bucket", args.input, "-o", index, "-q"])
    shards = []
    for i in range(args.shards):
        warm_folder(args.input)
        shards.append(run([args.dumpkit, "archive", args.input, "-o", out, "--index", index, "--shard", f"{i}/{args.shards}", "-q"]))
    merge_wall, merge_cpu = run([args.dumpkit, "merge", out, "-q"])
    same = tar_after_manifest(ref) == tar_after_manifest(out)
    walls = [w for w, _ in shards]
    cpus = [c for _, c in shards]
    mb = size / 1e6
    model = index_wall + max(walls) + merge_wall
    lines = [
        f"### archive: `dumpkit archive {os.path.basename(args.input)}` ({count} objects), `index --bucket`",
        "",
        "| measure | value |",
        "| --- | --- |",
        f"| unsharded run (1 machine) | {one_wall:.2f} s wall, {one_cpu:.2f} s CPU ({mb / one_wall:.0f} MB/s) |",
        f"| index pass (the listing) | {index_wall:.2f} s wall, {index_cpu:.2f} s CPU ({count / index_wall:.0f} objects/s), index {os.path.getsize(index) / 1e3:.0f} kB |",
        f"| {args.shards} shards one after another | each {min(walls):.2f}-{max(walls):.2f} s wall (mean {sum(walls) / len(walls):.2f}), CPU {sum(cpus):.2f} s in all |",
        f"| merge | {merge_wall:.2f} s wall, {merge_cpu:.2f} s CPU |",
        f"| shards' CPU against the unsharded run's | {sum(cpus) / one_cpu:.2f}x (with the merge: {(sum(cpus) + merge_cpu) / one_cpu:.2f}x; and the index pass: {(sum(cpus) + merge_cpu + index_cpu) / one_cpu:.2f}x) |",
        f"| modelled wall time on {args.shards} machines (index + largest shard + merge) | {model:.2f} s, against {one_wall:.2f} s on one ({one_wall / model:.1f}x faster) |",
        f"| merged archive: the unsharded manifest and tar after it | {'yes' if same else 'NO'} |",
        "",
        "Per shard (wall s): " + ", ".join(f"{w:.2f}" for w in walls),
        "",
    ]
    print("\n".join(lines), flush=True)
    if not same:
        sys.exit("archive: the merged archive differs from the unsharded one")
    shutil.rmtree(work, ignore_errors=True)
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--input", required=True, help="a todolist dump (Scripts/gen_dataset.py todolist; images for extract-blobs)")
    parser.add_argument("--shards", type=int, default=16)
    parser.add_argument("--dumpkit", default=os.path.join(REPO, ".build", "release", "dumpkit"))
    parser.add_argument("--work", default="/tmp/dumpkit-shard-bench")
    parser.add_argument("--commands", default="convert,convert-records,migrate,validate", help="comma-separated measures")
    args = parser.parse_args()
    commands = args.commands.split(",")
    if os.path.isdir(args.input):
        print(f"bucket {args.input}: {args.shards} shards, {os.cpu_count()} CPUs\n")
        measure_archive(args)
        return 0
    size = os.path.getsize(args.input)
    plan = os.path.join(args.work, "plan.yaml")
    os.makedirs(args.work, exist_ok=True)
    with open(os.path.join(REPO, "schemas", "todolist", "plan.yaml")) as f:
        text = "".join(line for line in f if "- move:" not in line)
    with open(plan, "w") as f:
        f.write(text)
    print(f"input {args.input}: {size / 1e6:.0f} MB, {args.shards} shards, {os.cpu_count()} CPUs\n")
    if "convert" in commands:
        measure("convert", ["convert"], [], args, size)
    if "convert-records" in commands:
        measure("convert, records as units", ["convert"], ["--records", "/v1/todolist/{id}"], args, size)
    if "migrate" in commands:
        measure("migrate", ["migrate", "--plan", plan, "--on-error", "keep"], ["--records", "/v1/todolist/{id}"], args, size)
    if "validate" in commands:
        schema = os.path.join(REPO, "schemas", "todolist", "v1.schema.json")
        measure("validate", ["validate", "--schema", f"/v1/todolist/{{id}}={schema}"], ["--records", "/v1/todolist/{id}"], args, size)
    if "extract-blobs" in commands:
        measure("extract-blobs", ["extract-blobs"], [], args, size, store=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
