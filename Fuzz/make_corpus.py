#!/usr/bin/env python3
"""Builds the seed corpora of the fuzz harnesses into Fuzz/corpus/<harness>/ (git-ignored).

Seeds come from ../shared/testdata (next to the project; never copied into the repository) and the
repository's samples/, schemas/ and docs/. Inputs that take two documents (rules and a database, a
plan and a record, a schema and an instance, a pattern and a subject) hold them separated by a NUL
byte, as the harnesses read them. Seeds are capped at MAX_BYTES so the fuzzers stay fast; existing
files are kept (a corpus grows as the fuzzers find new inputs). See docs/FUZZING.md.

Usage: Fuzz/make_corpus.py [--testdata DIR]
"""
import argparse
import hashlib
import io
import json
import os
import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

FUZZ = Path(__file__).resolve().parent
ROOT = FUZZ.parent
MAX_BYTES = 16 << 10


def add(harness, data):
    """Writes one seed, named by its SHA-1 as libFuzzer names the inputs it adds."""
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    if len(data) > MAX_BYTES:
        return
    folder = FUZZ / "corpus" / harness
    folder.mkdir(parents=True, exist_ok=True)
    (folder / hashlib.sha1(data).hexdigest()).write_bytes(data)


def pair(first, second):
    return (first.encode("utf-8", "surrogatepass") if isinstance(first, str) else first) + b"\0" + (second.encode("utf-8", "surrogatepass") if isinstance(second, str) else second)


def compact(value):
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def load(data):
    """The JSON value of `data`, or None (invalid, or nested too deep for Python)."""
    try:
        return json.loads(data)
    except (ValueError, RecursionError):
        return None


def small_json_files(testdata):
    for path in sorted((testdata / "real-dumps").glob("*.json")) + sorted(ROOT.glob("samples/*/*.json")):
        yield path
    for path in sorted((testdata / "JSONTestSuite" / "test_parsing").glob("*.json")):
        yield path


def json_seeds(testdata):
    for path in small_json_files(testdata):
        data = path.read_bytes()
        add("fuzz-json", data)
        value = load(data)
        # Large dumps: their top-level members one by one.
        if isinstance(value, dict) and len(data) > MAX_BYTES:
            for member in value.values():
                add("fuzz-json", compact(member))


def ndjson_seeds(testdata):
    for path in small_json_files(testdata):
        value = load(path.read_bytes())
        if not isinstance(value, dict):
            continue
        lines = []
        for key, child in value.items():
            if isinstance(child, dict):
                lines += [compact({"path": "/" + key + "/" + k.replace("~", "~0").replace("/", "~1"), "value": v}) for k, v in child.items()]
            else:
                lines.append(compact({"path": "/" + key, "value": child}))
        for start in range(0, len(lines), 8):
            add("fuzz-ndjson", "\n".join(lines[start:start + 8]) + "\n")
    for path in sorted(ROOT.glob("samples/*/*.ndjson")):
        add("fuzz-ndjson", path.read_bytes())


def rules_seeds(testdata):
    databases = [b"", compact({"users": {"bob": {"name": "Bob", "age": 30}}, "messages": {"-K1": {"text": "hi", "user": "bob"}}}).encode()]
    for path in sorted(ROOT.glob("samples/*/v1.json")):
        databases.append(path.read_bytes())
    rules_files = sorted((testdata / "real-rules").glob("*.json")) + sorted((testdata / "rules-cases" / "bolt").glob("rules-*.json"))
    rules_files += sorted(ROOT.glob("samples/*/database.rules.json"))
    for i, path in enumerate(rules_files):
        add("fuzz-rules", pair(path.read_bytes(), databases[i % len(databases)]))
    fixtures = testdata / "rules-cases" / "targaryen" / "parser-fixtures.json"
    for i, test in enumerate(json.loads(fixtures.read_bytes())["tests"] if fixtures.exists() else []):
        rules = {"rules": {"users": {"$uid": {".validate": test["rule"], ".write": "true"}}}}
        add("fuzz-rules", pair(compact(rules), databases[i % 2]))


def plan_seeds():
    records = [compact({"_createdAt": 1480000000000, "title": "a", "photo_count": "2", "progress": "完了", "image1": "1482814956123",
                        "price": "1.5", "done": "true", "savedAt": 1480000000, "date": "2016/11/20 10:00:00", "legacy": 1}),
               compact({"name": "x", "tags": {"a": True}, "n": 1.5, "when": "2016-11-20"})]
    plans = [p.read_text() for p in sorted(ROOT.glob("schemas/*/*.yaml"))]
    # The YAML examples of docs/PLANS.md that are whole plans.
    for block in re.findall(r"```yaml\n(.*?)```", (ROOT / "docs" / "PLANS.md").read_text(), re.S):
        if "steps:" in block:
            plans.append(block)
        elif block.startswith("- "):
            # A list of operations: as the one step of a plan.
            ops = "".join("      " + line + "\n" for line in block.splitlines())
            plans.append(f"name: p\nfrom: v1\nto: v2\nsteps:\n  - match: /v1/todolist/{{id}}\n    ops:\n{ops}")
    for i, plan in enumerate(plans):
        add("fuzz-plans", pair(plan, records[i % 2]))
    # One plan as JSON, so the JSON reader of plans is reached too.
    add("fuzz-plans", pair(compact({"name": "p", "from": "v1", "to": "v2", "steps": [
        {"match": "/v1/items/{id}", "ops": [{"rename": {"a": "b"}}, {"move": "/v2/items/{id}"}]}]}), compact({"a": 1})))


def schema_seeds(testdata):
    suite = testdata / "JSON-Schema-Test-Suite" / "tests" / "draft2020-12"
    for path in sorted(suite.rglob("*.json")):
        for group in json.loads(path.read_bytes()):
            for test in group["tests"][:2]:
                add("fuzz-schema", pair(compact(group["schema"]), compact(test["data"])))
    for path in sorted(ROOT.glob("schemas/*/*.schema.json")):
        sample = ROOT / "samples" / path.parent.name / "v1.json"
        add("fuzz-schema", pair(path.read_bytes(), sample.read_bytes() if sample.exists() else b"{}"))


def regex_seeds(testdata):
    patterns = set()
    suite = testdata / "JSON-Schema-Test-Suite" / "tests" / "draft2020-12"
    for path in sorted(suite.rglob("*.json")):
        for group in json.loads(path.read_bytes()):
            schema = group["schema"]
            if isinstance(schema, dict) and isinstance(schema.get("pattern"), str):
                for test in group["tests"]:
                    if isinstance(test["data"], str):
                        add("fuzz-regex", pair(schema["pattern"], test["data"]))
                patterns.add(schema["pattern"])
            if isinstance(schema, dict) and isinstance(schema.get("patternProperties"), dict):
                patterns.update(schema["patternProperties"].keys())
    for path in sorted((testdata / "rules-cases").rglob("*.json")):
        patterns.update(re.findall(r"matches\(/((?:[^/\\]|\\.)+)/i?\)", path.read_text(errors="replace")))
    # The patterns that stalled the engines before they had budgets (issue 25).
    patterns.update(["^(a+)+$", "(.+)*$", "(X+)+b", "(X*)+", "^(\\w+\\s?)*$", "(a|aa)*c", "(?<=a)b\\1(?=c)", "a{2,4}(b{0,1000}){3}"])
    for i, pattern in enumerate(sorted(patterns)):
        add("fuzz-regex", pair(pattern, ["aaaaaaaaaaaaaaaaaaaaaaaaaaaa!", "user@example.com", "-KabcDEF_0123456789", "2016-11-20T00:00:00Z"][i % 4]))


def archive_seeds(testdata):
    for path in sorted((testdata / "archives").glob("*.tar")) + sorted((testdata / "archives").glob("*.zip")):
        add("fuzz-archive", path.read_bytes())
    files = {"v1/todolist/-Ka/image1.png": b"\x89PNG\r\n\x1a\n" + bytes(range(64)), "news.json": b'{"a": 1}\n'}
    manifest = {"format": "dumpkit-archive", "formatVersion": 1, "toolVersion": "0.1.0", "created": "2016-11-20T00:00:00Z",
                "kind": "bucket", "parts": [{"role": "bucket", "path": "", "blobStore": False}], "objectCount": len(files),
                "totalBytes": sum(len(b) for b in files.values()), "objects": [
                    {"path": name, "name": name, "size": len(data), "contentType": "application/octet-stream",
                     "sha256": hashlib.sha256(data).hexdigest(), "md5": "", "crc32c": "", "metadata": {}} for name, data in sorted(files.items())]}
    entries = [(".dumpkit-manifest.json", json.dumps(manifest, indent=2).encode())] + sorted(files.items())
    for mode in ["", "gz", "bz2", "xz"]:
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w:" + mode, format=tarfile.PAX_FORMAT) as tar:
            for name, data in entries:
                info = tarfile.TarInfo(name)
                info.size = len(data)
                info.mtime = 1479600000
                tar.addfile(info, io.BytesIO(data))
        add("fuzz-archive", buffer.getvalue())
        if mode == "":
            plain = buffer.getvalue()
    zstd = subprocess.run(["zstd", "-q", "-c"], input=plain, capture_output=True)
    if zstd.returncode == 0:
        add("fuzz-archive", zstd.stdout)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in entries:
            z.writestr(name, data)
    add("fuzz-archive", buffer.getvalue())


def base64_seeds():
    import base64
    for n in [0, 1, 2, 3, 47, 48, 49, 95, 96, 97, 200]:
        data = bytes((i * 37 + n) & 0xFF for i in range(n))
        add("fuzz-base64", base64.b64encode(data))
    for path in sorted(ROOT.glob("samples/wedding/bucket/photos/*"))[:2]:
        add("fuzz-base64", base64.b64encode(path.read_bytes()[:4000]))
    add("fuzz-base64", b"QUJD\nREVG")
    add("fuzz-base64", b"QUJDRA")
    add("fuzz-base64", b"QUJDRB==")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--testdata", type=Path, default=ROOT.parent / "shared" / "testdata")
    args = parser.parse_args()
    if not args.testdata.is_dir():
        # As the tests do: without the shared test data, go on with the repository's seeds, except in CI.
        message = f"make_corpus: {args.testdata} is missing (the shared test data; see docs/FUZZING.md)"
        if os.environ.get("CI") == "true":
            raise SystemExit(message)
        print(message + "; seeding from the repository only", file=sys.stderr)
    json_seeds(args.testdata)
    ndjson_seeds(args.testdata)
    rules_seeds(args.testdata)
    plan_seeds()
    schema_seeds(args.testdata)
    regex_seeds(args.testdata)
    archive_seeds(args.testdata)
    base64_seeds()
    for folder in sorted((FUZZ / "corpus").iterdir()):
        print(f"make_corpus: {folder.name}: {sum(1 for _ in folder.iterdir())} inputs")


if __name__ == "__main__":
    main()
