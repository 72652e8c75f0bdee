#!/usr/bin/env python3
"""The peer for `dumpkit extract-blobs`: what a user would write instead.

Loads the dump with json, finds every string that embeds a file (a base64
data URI, or bare base64 whose first bytes are a JPEG, PNG, GIF, WebP,
HEIC/AVIF/MP4 or PDF) of at least --min-bytes decoded, and decodes, hashes
and writes them with a concurrent.futures.ThreadPoolExecutor (hashlib and
file writes release the GIL). Each object goes to STORE/<json path>.<ext>,
its metadata (size, type, SHA-256, MD5, CRC-32C, a download token derived
from the hash and the name) to STORE/.dumpkit/meta/<xx>/<SHA-256 of the
name>.json, both through
a temporary file and os.replace. Each string is replaced by
{"path", "contentType", "size", "sha256", "md5"} (plus "encoding": "base64"
for bare base64 and "header" for a data URI header other than
data:<type>;base64,), and the dump is written with json.dump: the same
output and store as `dumpkit extract-blobs IN -o OUT --blobs STORE`.

CRC-32C comes from the `crc32c` package (pip install crc32c) or
`google-crc32c`; without either, a pure-Python table is used (slow).

Usage:
  extract_blobs.py IN.json -o OUT.json --blobs STORE [--jobs N] [--min-bytes N]
"""

from __future__ import annotations

import argparse
import base64
import binascii
import concurrent.futures
import hashlib
import json
import os
import sys
import tempfile

try:
    from crc32c import crc32c as _crc32c
except ImportError:  # pragma: no cover - depends on the machine
    try:
        import google_crc32c

        def _crc32c(data: bytes) -> int:
            return google_crc32c.value(data)
    except ImportError:
        _TABLE = []
        for _i in range(256):
            _c = _i
            for _ in range(8):
                _c = (_c >> 1) ^ 0x82F63B78 if _c & 1 else _c >> 1
            _TABLE.append(_c)

        def _crc32c(data: bytes) -> int:
            c = 0xFFFFFFFF
            for b in data:
                c = _TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
            return c ^ 0xFFFFFFFF

MIME_ALIASES = {"image/jpg": "image/jpeg", "image/pjpeg": "image/jpeg", "image/heif": "image/heic",
                "image/heic-sequence": "image/heic", "image/heif-sequence": "image/heic",
                "image/avif-sequence": "image/avif", "application/x-pdf": "application/pdf",
                "application/mp4": "video/mp4", "audio/mp4": "video/mp4", "video/quicktime": "video/mp4"}
RECOGNISED = {"image/jpeg", "image/png", "image/gif", "image/webp", "image/heic", "image/avif",
              "application/pdf", "video/mp4"}
EXTENSIONS = {"image/svg+xml": "svg", "image/bmp": "bmp", "image/x-ms-bmp": "bmp", "image/tiff": "tiff",
              "image/x-icon": "ico", "image/vnd.microsoft.icon": "ico", "text/plain": "txt",
              "text/html": "html", "text/csv": "csv", "application/json": "json", "application/zip": "zip",
              "audio/mpeg": "mp3", "audio/wav": "wav", "audio/x-wav": "wav", "audio/ogg": "ogg",
              "video/webm": "webm"}
B64CHARS = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_")


def detect(b: bytes):
    """(mime type, extension) from magic bytes, or None."""
    if b[:3] == b"\xff\xd8\xff":
        return "image/jpeg", "jpg"
    if b[:8] == b"\x89PNG\r\n\x1a\n":
        return "image/png", "png"
    if b[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif", "gif"
    if b[:4] == b"RIFF" and b[8:12] == b"WEBP":
        return "image/webp", "webp"
    if b[:5] == b"%PDF-":
        return "application/pdf", "pdf"
    if b[4:8] == b"ftyp":
        brand = b[8:12]
        if brand in (b"heic", b"heix", b"hevc", b"hevx", b"heim", b"heis", b"mif1", b"msf1"):
            return "image/heic", "heic"
        if brand in (b"avif", b"avis"):
            return "image/avif", "avif"
        return "video/mp4", "mp4"
    return None


def strict_b64decode(payload: str):
    """Canonical base64 only, so that re-encoding gives the string back."""
    try:
        data = base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError):
        return None
    return data if base64.b64encode(data).decode("ascii") == payload else None


def embedded(s: str, min_bytes: int):
    """(bytes, mime, ext, header or None) for a string that embeds a file, else None."""
    if len(s) < (min_bytes + 2) // 3 * 4:
        return None
    if s.startswith("data:"):
        comma = s.find(",", 5, 256)
        if comma < 0 or not s[:comma].endswith(";base64"):
            return None
        header = s[:comma + 1]
        data = strict_b64decode(s[comma + 1:])
        if data is None or len(data) < min_bytes:
            return None
        declared = header[5:].split(";", 1)[0].split(",", 1)[0].lower()
        found = detect(data[:16])
        if found:
            return data, found[0], found[1], header
        if not declared or MIME_ALIASES.get(declared, declared) in RECOGNISED:
            return None
        return data, declared, EXTENSIONS.get(declared, "bin"), header
    head = s[:24].encode("ascii", "replace")
    if len(head) < 24 or not all(c in B64CHARS for c in head):
        return None
    if detect(base64.b64decode(head.replace(b"-", b"+").replace(b"_", b"/"))) is None:
        return None
    data = strict_b64decode(s)
    if data is None or len(data) < min_bytes:
        return None
    found = detect(data[:16])
    return data, found[0], found[1], None


def token(sha256: str, name: str) -> str:
    """A download token derived from the content and the name, formatted as a v4 UUID."""
    b = bytearray(hashlib.sha256(f"dumpkit download token\0{sha256}\0{name}".encode()).digest()[:16])
    b[6] = (b[6] & 0x0F) | 0x40
    b[8] = (b[8] & 0x3F) | 0x80
    h = b.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def write_atomic(path: str, data: bytes, tmp_dir: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=tmp_dir, prefix="put-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def store_object(store: str, name: str, found, tmp_dir: str) -> dict:
    """Hashes and writes one file; returns its reference."""
    data, mime, _, header = found
    sha = hashlib.sha256(data).hexdigest()
    md5 = base64.b64encode(hashlib.md5(data).digest()).decode()
    crc = base64.b64encode(_crc32c(data).to_bytes(4, "big")).decode()
    meta = {"name": name, "size": len(data), "contentType": mime, "sha256": sha, "md5": md5, "crc32c": crc,
            "metadata": {"firebaseStorageDownloadTokens": token(sha, name)}}
    meta_bytes = (json.dumps(meta, separators=(",", ":"), ensure_ascii=False) + "\n").encode()
    key = hashlib.sha256(name.encode()).hexdigest()
    meta_path = os.path.join(store, ".dumpkit", "meta", key[:2], key + ".json")
    obj_path = os.path.join(store, name)
    try:
        with open(meta_path, "rb") as f:
            unchanged = f.read() == meta_bytes and os.path.getsize(obj_path) == len(data)
    except OSError:
        unchanged = False
    if not unchanged:
        write_atomic(obj_path, data, tmp_dir)
        write_atomic(meta_path, meta_bytes, tmp_dir)
    ref = {"path": name, "contentType": mime, "size": len(data), "sha256": sha, "md5": md5}
    if header is None:
        ref["encoding"] = "base64"
    elif header != f"data:{mime};base64,":
        ref["header"] = header
    return ref


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Move base64 files out of a JSON dump into a directory.")
    parser.add_argument("input")
    parser.add_argument("-o", "--output", required=True)
    parser.add_argument("--blobs", required=True, help="store directory")
    parser.add_argument("--jobs", type=int, default=os.cpu_count())
    parser.add_argument("--min-bytes", type=int, default=1024)
    args = parser.parse_args(argv)

    with open(args.input, encoding="utf-8") as f:
        doc = json.load(f)
    tmp_dir = os.path.join(args.blobs, ".dumpkit", "tmp")
    os.makedirs(tmp_dir, exist_ok=True)
    os.makedirs(os.path.join(args.blobs, ".dumpkit", "meta"), exist_ok=True)
    open(os.path.join(args.blobs, ".dumpkit", "lock"), "a").close()

    names: set[str] = set()
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        pending = []

        def walk(value, path):
            items = value.items() if isinstance(value, dict) else enumerate(value)
            for key, v in items:
                p = path + [str(key)]
                if isinstance(v, (dict, list)):
                    walk(v, p)
                elif isinstance(v, str):
                    found = embedded(v, args.min_bytes)
                    if found:
                        name = "/".join(p) + "." + found[2]
                        if name in names:
                            raise SystemExit(f"extract_blobs: object name {name} used twice")
                        names.add(name)
                        pending.append((value, key, pool.submit(store_object, args.blobs, name, found, tmp_dir)))

        if isinstance(doc, (dict, list)):
            walk(doc, [])
        for container, key, future in pending:
            container[key] = future.result()

    out_dir = os.path.dirname(os.path.abspath(args.output))
    fd, tmp = tempfile.mkstemp(dir=out_dir, prefix=".extract-")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(doc, f, separators=(",", ":"), ensure_ascii=False)
        f.write("\n")
    os.chmod(tmp, 0o644)
    os.replace(tmp, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
