#!/usr/bin/env python3
"""Checks for gen_dataset.py; run as `python3 Scripts/test_gen_dataset.py`.

Generates small datasets in a temporary directory and checks: the same seed
gives byte-identical output (another seed does not), sizes are close to the
request, push IDs are well formed and increasing with _createdAt matching
their time, every file is valid JSON, embedded and bucket images are what
`file` says they are, and the errors dataset's pointers resolve.
Exits non-zero on the first failed check. Takes a few seconds.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
GEN = os.path.join(HERE, "gen_dataset.py")
sys.path.insert(0, HERE)
import gen_dataset  # noqa: E402

PUSH_ID = re.compile(r"^[-0-9A-Z_a-z]{20}$")
SIZE = 400_000


def gen(tmp: str, *args: str) -> str:
    out = os.path.join(tmp, "-".join(a.lstrip("-") for a in args))
    subprocess.run([sys.executable, GEN, *args, "-o", out], check=True,
                   stderr=subprocess.DEVNULL)
    return out


def digest(path: str) -> str:
    """sha256 of a file, or of a directory's paths, contents and mtimes."""
    h = hashlib.sha256()
    if os.path.isfile(path):
        with open(path, "rb") as f:
            h.update(f.read())
        return h.hexdigest()
    for root, dirs, files in sorted(os.walk(path)):
        dirs.sort()
        for name in sorted(files):
            p = os.path.join(root, name)
            h.update(os.path.relpath(p, path).encode() + b"\0")
            h.update(str(int(os.stat(p).st_mtime)).encode() + b"\0")
            with open(p, "rb") as f:
                h.update(f.read())
    return h.hexdigest()


def file_kinds(paths: list[str]) -> list[str]:
    out = subprocess.run(["file", "--brief", *paths], check=True, capture_output=True, text=True)
    return out.stdout.splitlines()


def resolve(doc, pointer: str):
    for token in pointer.split("/")[1:]:
        doc = doc[token.replace("~1", "/").replace("~0", "~")]
    return doc


def check_determinism(tmp: str) -> None:
    for args in (["todolist", "--size", "200KB"], ["images", "--size", "600KB"],
                 ["errors", "--size", "200KB"], ["bucket", "--count", "20", "--size", "500KB"]):
        a = digest(gen(os.path.join(tmp, "a"), *args, "--seed", "7"))
        b = digest(gen(os.path.join(tmp, "b"), *args, "--seed", "7"))
        c = digest(gen(os.path.join(tmp, "c"), *args, "--seed", "8"))
        assert a == b, f"{args[0]}: same seed gave different output"
        assert a != c, f"{args[0]}: different seeds gave the same output"
    print("ok  determinism (todolist, images, errors, bucket)")


def check_todolist(tmp: str) -> None:
    path = gen(tmp, "todolist", "--size", str(SIZE), "--seed", "3")
    size = os.path.getsize(path)
    assert SIZE - 2_000 <= size <= SIZE, f"todolist size {size} not close to {SIZE}"
    with open(path, encoding="utf-8") as f:
        text = f.read()
    assert "\\u" not in text.replace("\\\\", ""), "non-ASCII text should be written unescaped"
    records = json.loads(text)["v1"]["todolist"]
    keys = list(records)
    assert len(keys) > 500, len(keys)
    assert all(PUSH_ID.match(k) for k in keys), "malformed push id"
    assert keys == sorted(keys) and len(set(keys)) == len(keys), "push ids not increasing"
    times = [gen_dataset.push_id_time(k) for k in keys]
    assert times == sorted(times) and times[0] >= gen_dataset.EPOCH_MS
    eras = set()
    for key, rec in records.items():
        assert 5 <= len(rec) <= 10, rec
        assert list(rec) == sorted(rec), "fields not in key order"
        if "_createdAt" in rec:
            assert rec["_createdAt"] == gen_dataset.push_id_time(key)
        assert rec["_updatedAt"] >= gen_dataset.push_id_time(key)
        assert isinstance(rec["title"], str) and 5 <= len(rec["title"]) <= 40, rec["title"]
        assert len(rec.get("detail", "")) <= 200
        assert rec["photo_count"] in ("0", "1", "2", "3")
        for i in (1, 2, 3):
            image = rec.get(f"image{i}")
            if isinstance(image, str):
                eras.add(1)
                assert image.isdigit()
            elif image is not None:
                eras.add(2)
                assert set(image) == {"name", "url", "mimeType"}
                assert image["url"].startswith(gen_dataset.URL_PREFIX + key + f"%2Fimage{i}%2F{image['name']}?")
    assert eras == {1, 2}, eras
    progress = {r["progress"] for r in records.values()}
    assert {"これから着手", "着手中", "完了"} <= progress
    print(f"ok  todolist: {len(keys)} records, {size} bytes")


def check_images(tmp: str) -> None:
    size = 3_000_000
    path = gen(tmp, "images", "--size", str(size), "--seed", "5")
    assert size * 0.8 <= os.path.getsize(path) <= size
    with open(path, "rb") as f:
        raw = f.read()
    articles = json.loads(raw)["articles"]
    assert list(articles) == sorted(articles)
    blobs: list[tuple[str, bytes]] = []
    for rec in articles.values():
        for field, prefix in (("photo", "data:image/"), ("thumbnail", ""), ("attachment", "")):
            if field in rec:
                value = rec[field]
                assert value.startswith(prefix) and (field == "photo") == value.startswith("data:")
                blobs.append((field, base64.b64decode(value.split(",", 1)[-1], validate=True)))
    b64 = sum(len(base64.b64encode(b)) for _, b in blobs)
    assert 0.7 < b64 / len(raw) < 0.9, f"image share {b64 / len(raw):.2f}"
    assert len({b for _, b in blobs}) < len(blobs), "expected some duplicate images"
    if not shutil.which("file"):
        print("SKIP file(1) checks: `file` is not installed (apt-get install -y file)")
        return
    kinds = {"jpeg": 0, "png": 0, "pdf": 0}
    paths = []
    for i, (field, data) in enumerate(blobs[:200]):
        p = os.path.join(tmp, f"blob{i}")
        with open(p, "wb") as f:
            f.write(data)
        paths.append(p)
    for (field, data), kind in zip(blobs, file_kinds(paths)):
        if kind.startswith("JPEG image data"):
            kinds["jpeg"] += 1
        elif kind.startswith("PNG image data"):
            kinds["png"] += 1
        elif kind.startswith("PDF document"):
            kinds["pdf"] += 1
        else:
            raise AssertionError(f"{field}: file says {kind!r}")
    assert all(kinds.values()), kinds
    print(f"ok  images: {len(articles)} records, {len(blobs)} blobs, file(1) says {kinds}")


def check_bucket(tmp: str) -> None:
    out = gen(tmp, "bucket", "--count", "40", "--size", "2MB", "--seed", "2")
    files = sorted(os.path.join(r, n) for r, _, ns in os.walk(out) for n in ns)
    assert len(files) == 40
    total = sum(os.path.getsize(p) for p in files)
    assert 1_000_000 < total < 3_000_000, total
    jsons = [p for p in files if p.endswith(".json")]
    images = [p for p in files if not p.endswith(".json")]
    assert len(jsons) == len(images) == 20
    for p in jsons:
        with open(p, encoding="utf-8") as f:
            json.load(f)
    for p in images:
        parts = os.path.relpath(p, out).split(os.sep)
        assert parts[:2] == ["v1", "todolist"] and PUSH_ID.match(parts[2]) and parts[3].startswith("image")
    if shutil.which("file"):
        assert all(k.startswith(("JPEG image data", "PNG image data")) for k in file_kinds(images))
    print(f"ok  bucket: {len(files)} objects, {total} bytes")


def check_errors(tmp: str) -> None:
    path = gen(tmp, "errors", "--size", "1MB", "--seed", "4")
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    with open(path + ".expected.json", encoding="utf-8") as f:
        expected = json.load(f)
    errors = expected["errors"]
    n = len(doc["v1"]["todolist"])
    assert expected["records"] == n
    assert 0.003 * n < len(errors) < 0.03 * n, (len(errors), n)
    for e in errors:
        value = resolve(doc, e["pointer"])
        kind = e["kind"]
        if kind == "empty_title":
            assert value == ""
        elif kind in ("non_string_title", "number_for_string"):
            assert not isinstance(value, str)
        elif kind.startswith("forbidden_char"):
            assert re.search(r"[.#$\[\]]", e["pointer"].rsplit("/", 1)[1])
        elif kind == "too_deep":
            assert e["depth"] > expected["max_depth"]
            resolve(doc, e["first_too_deep"])
            assert e["first_too_deep"].count("/") == expected["max_depth"] + 1
        elif kind == "value_beside_children":
            assert ".value" in value and len(value) > 1
    print(f"ok  errors: {len(errors)} injected in {n} records, all pointers resolve")


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="gen_dataset_test.") as tmp:
        check_determinism(tmp)
        check_todolist(tmp)
        check_images(tmp)
        check_bucket(tmp)
        check_errors(tmp)
    print("all gen_dataset checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
