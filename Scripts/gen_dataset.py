#!/usr/bin/env python3
"""Deterministic dataset generators for DumpKit's benchmarks and tests.

Every dataset depends only on --seed and the size options: the same arguments
give byte-identical output on any machine (standard library only; PNG data is
written with stored deflate blocks so no zlib version can change it).

Sizes are decimal: 5MB = 5,000,000 bytes, 1GB = 10^9 bytes (KiB/MiB/GiB are
binary). JSON files never exceed the size and stop within one record of it.

Usage:
  gen_dataset.py todolist --size 100MB --seed 1 -o bench-data/todolist.json
      A Salada ToDo Realtime-Database export, v1 schema:
      {"v1": {"todolist": {<pushId>: {...}, ...}}}, compact UTF-8, records and
      fields in the database's key order.
  gen_dataset.py images --size 100MB --seed 1 -o bench-data/images.json
      {"articles": {<pushId>: {...}}} where ~80% of the bytes are inline
      base64 images: JPEG/PNG data: URIs in "photo", bare base64 PNG in
      "thumbnail" and bare base64 PDF in "attachment"; ~10% of images repeat.
  gen_dataset.py bucket --count 1000 --size 100MB --seed 1 -o bench-data/bucket/
      A Storage bucket directory: half images (JPEG/PNG with random pixel
      data, incompressible) under v1/todolist/<pushId>/image<k>/<name>, half
      JSON files under v1/todolist/<pushId>/revisions/<name>.json.
  gen_dataset.py errors --size 5MB --seed 1 -o bench-data/errors.json
      A todolist dump where ~1% of records carry one validation error; the
      injected errors' JSON Pointers go to FILE.expected.json.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import random
import re
import struct
import sys
import time
import zlib
from collections import deque
from typing import Callable, Iterable, Iterator

# --------------------------------------------------------------------------
# Sizes

_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]?i?B?)?\s*$", re.IGNORECASE)
_UNITS = {"": 1, "B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12,
          "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12,
          "KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40}


def parse_size(text: str) -> int:
    """'5MB' -> 5_000_000, '1GB' -> 10**9, '2MiB' -> 2_097_152, '1234' -> 1234."""
    m = _SIZE_RE.match(text)
    unit = (m.group(2) or "").upper() if m else None
    if not m or unit not in _UNITS:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (try 100MB, 1GB, 512KiB)")
    return int(float(m.group(1)) * _UNITS[unit])


# --------------------------------------------------------------------------
# Firebase push IDs

PUSH_CHARS = "-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz"
# Two push-ID characters for each 12-bit value: a timestamp is 4 table lookups.
_PAIRS = [PUSH_CHARS[i >> 6] + PUSH_CHARS[i & 63] for i in range(4096)]
# Maps every byte to a push-ID character; 256 = 4 * 64 keeps it uniform.
_SUFFIX_TABLE = bytes(ord(PUSH_CHARS[i & 63]) for i in range(256))

EPOCH_MS = 1477958400000   # 2016-11-01T00:00:00Z, when the app went live
ERA2_MS = 1488326400000    # 2017-03-01: images stored as {name, url, mimeType}
DAY_MS = 86_400_000


def push_id_time(key: str) -> int:
    """The millisecond timestamp encoded in a push ID's first 8 characters."""
    ms = 0
    for c in key[:8]:
        ms = ms * 64 + PUSH_CHARS.index(c)
    return ms


class PushIds:
    """Real Firebase push IDs: 8 characters of big-endian base-64 time in ms,
    then 12 random characters. Times strictly increase, so keys do too."""

    def __init__(self, rng: random.Random, start_ms: int = EPOCH_MS,
                 max_gap_ms: int = 240_000):
        self.rng = rng
        self.ms = start_ms
        self.max_gap_ms = max_gap_ms
        self._suffixes = ""
        self._pos = 0

    def key(self, ms: int) -> str:
        """A push ID for time `ms` with a fresh random suffix."""
        if self._pos >= len(self._suffixes):
            self._suffixes = self.rng.randbytes(12 * 4096).translate(_SUFFIX_TABLE).decode("ascii")
            self._pos = 0
        suffix = self._suffixes[self._pos:self._pos + 12]
        self._pos += 12
        return (_PAIRS[(ms >> 36) & 4095] + _PAIRS[(ms >> 24) & 4095]
                + _PAIRS[(ms >> 12) & 4095] + _PAIRS[ms & 4095] + suffix)

    def __iter__(self) -> Iterator[tuple[str, int]]:
        return self

    def __next__(self) -> tuple[str, int]:
        # Cubed uniform: mostly short gaps (bursts of activity), some long ones.
        self.ms += 1 + int(self.rng.random() ** 3 * self.max_gap_ms)
        return self.key(self.ms), self.ms


def uuid4(rng: random.Random) -> str:
    """A version-4 UUID drawn from `rng` (the uuid module would use os.urandom)."""
    h = "%032x" % rng.getrandbits(128)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{'89ab'[int(h[16], 16) & 3]}{h[17:20]}-{h[20:]}"


# --------------------------------------------------------------------------
# Text

JA_WORDS = (
    "買い物 牛乳 卵 パン 会議 資料 作成 確認 メール 返信 掃除 洗濯 予約 病院 銀行 振込 提出 レポート 宿題 "
    "読書 散歩 ジム 料理 夕飯 準備 電話 連絡 修理 更新 申請 旅行 チケット 誕生日 プレゼント 来週 今日 明日 "
    "までに を する の と に 打ち合わせ 見積もり 請求書 発送 梱包 引っ越し 契約 郵便局 歯医者 美容院 "
    "ゴミ出し 植木 水やり 猫 犬 散髪 年賀状 確定申告 保険 車検 東京 大阪 京都 渋谷 新宿 駅前 カフェ "
    "ランチ 夜 朝 午後 至急 できれば 忘れずに 再確認 共有 レビュー 議事録 企画書 デザイン 実装 テスト"
).split()
EN_WORDS = (
    "buy milk eggs bread call mom dad fix bug write report review PR meeting notes book flight "
    "tickets pay rent clean kitchen gym plan trip update docs deploy release email reply to "
    "the a for with before after Monday Friday weekend groceries dentist haircut package pick up "
    "drop off laundry taxes invoice slides demo draft send renew passport insurance car wash "
    "garden water plants cat food vet birthday gift party order pizza backup photos Tokyo Osaka"
).split()
EMOJI = ["✅", "🔥", "📝", "🛒", "🍣", "🎉", "💡", "📅", "🏃", "☕", "🐱", "👍", "😅", "🚀",
         "📦", "❤️", "🍺", "🎂", "✈️", "🏥", "💰", "👨‍👩‍👧", "🇯🇵", "🙇‍♂️", "⭐"]
# Rare characters that JSON must escape; details use them so escaping gets exercised.
ESCAPES = ['"', "\\", "\n", "\t", "\\n", "/"]


def make_text(rng: random.Random, length: int, style: str) -> str:
    """Text of exactly `length` characters (code points) in a style:
    'ja' (Japanese words, no spaces), 'en' (English words), or 'mix'."""
    parts: list[str] = []
    n = 0
    while n < length:
        s = style if style != "mix" else ("ja" if rng.random() < 0.5 else "en")
        u = rng.random()
        if u < 0.06:
            w = rng.choice(EMOJI)
        elif s == "ja":
            w = rng.choice(JA_WORDS)
            if u > 0.9:
                w += rng.choice("、。！？")
        else:
            w = rng.choice(EN_WORDS) + " "
        parts.append(w)
        n += len(w)
    return "".join(parts)[:length].strip() or "x"


def make_title(rng: random.Random) -> str:
    style = rng.choices(["ja", "en", "mix"], weights=[45, 35, 20])[0]
    text = make_text(rng, rng.randint(5, 40), style)
    if rng.random() < 0.2:
        text = (text + rng.choice(EMOJI))[:40]
    while len(text) < 5:
        text += rng.choice(EMOJI)
    return text


def make_detail(rng: random.Random, max_len: int = 200) -> str:
    n = int(rng.random() ** 1.5 * max_len)
    text = make_text(rng, n, rng.choices(["ja", "en", "mix"], weights=[50, 35, 15])[0])
    if text and rng.random() < 0.25:  # a line break or a character JSON escapes
        i = rng.randrange(len(text))
        text = (text[:i] + rng.choice(ESCAPES) + text[i:])[:max_len]
    return text if n else ""


def json_str(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)


def text_pools(rng: random.Random, n: int = 16384) -> tuple[list[str], list[str]]:
    """JSON-encoded titles and details, drawn once so records only index them."""
    titles = [json_str(make_title(rng)) for _ in range(n)]
    details = [json_str(make_detail(rng)) for _ in range(n)]
    return titles, details


def json_pointer(keys: Iterable[str]) -> str:
    """RFC 6901 JSON Pointer of a path of keys."""
    return "".join("/" + k.replace("~", "~0").replace("/", "~1") for k in keys)


# --------------------------------------------------------------------------
# Streaming JSON object writer

def write_object_stream(path: str, head: str, entries: Iterable[bytes], limit: int,
                        tail: str) -> tuple[int, int]:
    """Write `head`, the entries (each '"key":value' in UTF-8) separated by commas,
    then `tail`, stopping before the file would exceed `limit` bytes.
    Writes to a temporary file and renames it. Returns (entries written, file size)."""
    head_b, tail_b = head.encode(), tail.encode()
    budget = limit - len(head_b) - len(tail_b)
    used = count = 0
    buf: list[bytes] = []
    buf_len = 0
    tmp = path + ".partial"
    with open(tmp, "wb") as f:
        f.write(head_b)
        for entry in entries:
            need = len(entry) + (1 if count else 0)
            if used + need > budget:
                break
            if buf_len == 0 and count:
                f.write(b",")  # between the previous block and this one
            buf.append(entry)
            used += need
            buf_len += len(entry)
            count += 1
            if buf_len >= 1 << 23:
                f.write(b",".join(buf))
                buf.clear()
                buf_len = 0
        if buf:
            f.write(b",".join(buf))
        f.write(tail_b)
    os.replace(tmp, path)
    return count, len(head_b) + used + len(tail_b)


# --------------------------------------------------------------------------
# todolist

URL_PREFIX = "https://firebasestorage.googleapis.com/v0/b/salada-todo.appspot.com/o/v1%2Ftodolist%2F"
PROGRESS = [json_str(s) for s in ("これから着手", "着手中", "完了")]
PROGRESS_UNKNOWN = [json_str(s) for s in ("保留", "やらない", "TODO")]


def todolist_records(rng: random.Random) -> Iterator[tuple[str, list[str]]]:
    """Endless (pushId, fields) in key order; each field is '"name":value' JSON
    text, and the fields are in the database's key order."""
    titles, details = text_pools(rng)
    nt, nd = len(titles), len(details)
    r = rng.random
    for key, ms in PushIds(rng):
        fields = []
        has_created = r() >= 0.02
        if has_created:
            fields.append(f'"_createdAt":{ms}')
        u = r()
        updated = ms if u < 0.35 else ms + 1 + int(u * u * u * 120 * DAY_MS)
        fields.append(f'"_updatedAt":{updated}')
        if not has_created or r() < 0.85:  # keep at least 5 fields
            fields.append('"detail":' + details[int(r() * nd)])
        u = r()
        n_images = 0 if u < 0.40 else 1 if u < 0.70 else 2 if u < 0.88 else 3
        if n_images:
            era2 = (ms >= ERA2_MS) != (r() < 0.05)  # a few records cross over
            span = updated - ms + 1
            for i in range(1, n_images + 1):
                name = str(ms + int(r() * span))
                if era2:
                    mime = "image/jpeg" if r() < 0.9 else "image/png"
                    fields.append(
                        f'"image{i}":{{"mimeType":"{mime}","name":"{name}","url":"{URL_PREFIX}'
                        f'{key}%2Fimage{i}%2F{name}?alt=media&token={uuid4(rng)}"}}')
                else:
                    fields.append(f'"image{i}":"{name}"')
        photo_count = n_images if r() >= 0.01 else int(r() * 4)  # rare drift
        fields.append(f'"photo_count":"{photo_count}"')
        u = r()
        fields.append('"progress":' + (PROGRESS[int(u * 3)] if u < 0.995
                                       else PROGRESS_UNKNOWN[int(r() * 3)]))
        fields.append('"title":' + titles[int(r() * nt)])
        yield key, fields


def record_entry(key: str, fields: list[str]) -> bytes:
    return ('"%s":{%s}' % (key, ",".join(fields))).encode()


def gen_todolist(size: int, seed: int, out: str) -> dict:
    rng = random.Random(seed)
    entries = (record_entry(k, f) for k, f in todolist_records(rng))
    count, nbytes = write_object_stream(out, '{"v1":{"todolist":{', entries, size, "}}}")
    return {"records": count, "bytes": nbytes}


# --------------------------------------------------------------------------
# errors

ERROR_KINDS = ("empty_title", "non_string_title", "forbidden_char_in_record_key",
               "forbidden_char_in_field_key", "number_for_string", "too_deep",
               "value_beside_children")
FORBIDDEN_FIELD_NAMES = ("memo.txt", "tag#1", "price$", "items[0]", "a]b", "v1.2")
MAX_DEPTH = 32  # the Realtime Database's nesting limit, in keys from the root


def _field_name(field: str) -> str:
    return field[1:field.index('"', 1)]


def inject_error(rng: random.Random, key: str, fields: list[str]) -> tuple[str, list[str], dict]:
    """Put one validation error into a record; returns the new key, fields and
    the error's description (pointer, kind and details)."""
    kind = rng.choice(ERROR_KINDS)
    base = ["v1", "todolist"]
    err: dict = {"kind": kind}
    if kind == "empty_title":
        fields[-1] = '"title":""'
        err["pointer"] = json_pointer(base + [key, "title"])
    elif kind == "non_string_title":
        fields[-1] = '"title":' + rng.choice(['42', 'true', '["買い物","牛乳"]', '{"ja":"牛乳"}', '3.5'])
        err["pointer"] = json_pointer(base + [key, "title"])
    elif kind == "forbidden_char_in_record_key":
        i = 8 + rng.randrange(12)  # in the random part: key order is unchanged
        key = key[:i] + rng.choice(".#$[]") + key[i + 1:]
        err["pointer"] = json_pointer(base + [key])
    elif kind == "forbidden_char_in_field_key":
        name = rng.choice(FORBIDDEN_FIELD_NAMES)
        fields.append(f'"{name}":"x"')
        fields.sort(key=_field_name)
        err["pointer"] = json_pointer(base + [key, name])
    elif kind == "number_for_string":
        targets = [i for i, f in enumerate(fields)
                   if _field_name(f) in ("detail", "photo_count", "progress")]
        i = rng.choice(targets)
        name = _field_name(fields[i])
        fields[i] = f'"{name}":{rng.choice([0, 1, 2, 3, 12345])}'
        err["pointer"] = json_pointer(base + [key, name])
    elif kind == "too_deep":
        depth = rng.randint(MAX_DEPTH + 1, MAX_DEPTH + 8)  # keys from root to the leaf
        chain = depth - 4  # below v1/todolist/<key>/notes
        fields.append('"notes":' + '{"n":' * chain + '"深い"' + "}" * chain)
        fields.sort(key=_field_name)
        err["pointer"] = json_pointer(base + [key, "notes"])
        err["depth"] = depth
        err["first_too_deep"] = json_pointer(base + [key, "notes"] + ["n"] * (MAX_DEPTH + 1 - 4))
    else:  # value_beside_children
        fields.insert(0, '".value":"x"')  # '.' sorts before '_'
        err["pointer"] = json_pointer(base + [key])
    return key, fields, err


def gen_errors(size: int, seed: int, out: str, rate: float = 0.01) -> dict:
    rng = random.Random(seed)
    errors: list[tuple[int, dict]] = []

    def entries() -> Iterator[bytes]:
        for index, (key, fields) in enumerate(todolist_records(rng)):
            if rng.random() < rate:
                key, fields, err = inject_error(rng, key, fields)
                errors.append((index, err))
            yield record_entry(key, fields)

    count, nbytes = write_object_stream(out, '{"v1":{"todolist":{', entries(), size, "}}}")
    kept = [e for i, e in errors if i < count]  # the last record may not have fit
    expected = {"dataset": "errors", "seed": seed, "records": count,
                "max_depth": MAX_DEPTH, "errors": kept}
    with open(out + ".expected.json", "w", encoding="utf-8") as f:
        json.dump(expected, f, ensure_ascii=False, indent=1)
        f.write("\n")
    kinds: dict[str, int] = {}
    for e in kept:
        kinds[e["kind"]] = kinds.get(e["kind"], 0) + 1
    return {"records": count, "bytes": nbytes, "errors": len(kept), "by_kind": kinds,
            "expected": out + ".expected.json"}


# --------------------------------------------------------------------------
# Image and document bytes (standard library only)

def _jpeg_segment(marker: int, payload: bytes) -> bytes:
    return struct.pack(">BBH", 0xFF, marker, len(payload) + 2) + payload


# Baseline JPEG, 3 components at 1x1 sampling, sharing one quantization table
# and one DC/AC Huffman table pair. The tables hold only the symbols we emit:
#   DC: category 0 (a zero difference) -> code "0"
#   AC: 0x0A (run 0, 10 extra bits) -> "0", 0x00 (end of block) -> "10"
# Each block is: DC "0", 55 coefficients of "0" + 10 random bits, EOB "10".
# An MCU (Y, Cb, Cr) is then 3 * (1 + 55*11 + 2) = 1824 bits = 228 bytes, a
# whole number of bytes, so scans are a bitwise template | (random & mask):
# 90% of the bits are random, making the file about as incompressible as a
# real photo while every byte still decodes.
_JPEG_COEFS = 55
_JPEG_TABLES = (
    _jpeg_segment(0xE0, b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00")
    + _jpeg_segment(0xDB, b"\x00" + bytes([16] * 64))
    + _jpeg_segment(0xC4, b"\x00" + bytes([1] + [0] * 15) + b"\x00")
    + _jpeg_segment(0xC4, b"\x10" + bytes([1, 1] + [0] * 14) + b"\x0a\x00")
)
_JPEG_SOS = _jpeg_segment(0xDA, b"\x03\x01\x00\x02\x00\x03\x00\x00\x3f\x00")


def _jpeg_mcu_template() -> tuple[bytes, bytes]:
    block_t = "0" + ("0" + "0" * 10) * _JPEG_COEFS + "10"
    block_m = "0" + ("0" + "1" * 10) * _JPEG_COEFS + "00"
    t, m = block_t * 3, block_m * 3
    assert len(t) % 8 == 0
    n = len(t) // 8
    return int(t, 2).to_bytes(n, "big"), int(m, 2).to_bytes(n, "big")


_MCU_TEMPLATE, _MCU_MASK = _jpeg_mcu_template()


def jpeg_bytes(rng: random.Random, target: int) -> bytes:
    """A decodable baseline JPEG (colour noise) of about `target` bytes."""
    n = max(1, (target - 200) // len(_MCU_TEMPLATE))
    w = max(1, int((n * 4 / 3) ** 0.5))  # about 4:3
    h = max(1, n // w)
    n = w * h
    nbytes = n * len(_MCU_TEMPLATE)
    template = int.from_bytes(_MCU_TEMPLATE * n, "big")
    mask = int.from_bytes(_MCU_MASK * n, "big")
    scan = (template | (rng.getrandbits(nbytes * 8) & mask)).to_bytes(nbytes, "big")
    scan = scan.replace(b"\xff", b"\xff\x00")  # byte stuffing
    sof = _jpeg_segment(0xC0, struct.pack(">BHHB", 8, h * 8, w * 8, 3)
                        + b"\x01\x11\x00\x02\x11\x00\x03\x11\x00")
    return b"\xff\xd8" + _JPEG_TABLES + sof + _JPEG_SOS + scan + b"\xff\xd9"


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(data, zlib.crc32(kind)))


def _stored_zlib(data: bytes) -> bytes:
    """A zlib stream of stored (uncompressed) deflate blocks: the same bytes
    under every zlib version, and as large as random pixels would compress to."""
    view = memoryview(data)
    out = [b"\x78\x01"]
    step = 65535
    for i in range(0, max(len(data), 1), step):
        chunk = view[i:i + step]
        final = 1 if i + step >= len(data) else 0
        out.append(struct.pack("<BHH", final, len(chunk), len(chunk) ^ 0xFFFF))
        out.append(bytes(chunk))
    out.append(struct.pack(">I", zlib.adler32(data)))
    return b"".join(out)


def png_bytes(rng: random.Random, target: int) -> bytes:
    """An RGB PNG of random pixels, about `target` bytes."""
    w = rng.randint(8, 256)
    stride = 3 * w + 1
    h = max(1, (target - 100) // stride)
    raw = bytearray(rng.randbytes(h * stride))
    raw[0::stride] = bytes(h)  # filter type 0 on every scanline
    ihdr = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + _png_chunk(b"IHDR", ihdr)
            + _png_chunk(b"IDAT", _stored_zlib(bytes(raw))) + _png_chunk(b"IEND", b""))


_PDF_WORDS = [w for w in EN_WORDS if w.isalnum()]


def pdf_bytes(rng: random.Random, target: int) -> bytes:
    """A valid PDF 1.4 of pages of random English text, about `target` bytes."""
    lines_per_page = 60
    pages: list[bytes] = []
    total = 400
    while total < target or not pages:
        lines = [("(" + " ".join(rng.choices(_PDF_WORDS, k=12)) + ") '").encode()
                 for _ in range(lines_per_page)]
        content = b"BT /F1 10 Tf 12 TL 50 770 Td\n" + b"\n".join(lines) + b"\nET"
        pages.append(content)
        total += len(content) + 200
    n = len(pages)
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>",
               b"<< /Type /Pages /Kids [" + b" ".join(b"%d 0 R" % (4 + 2 * i) for i in range(n))
               + b"] /Count %d >>" % n,
               b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    for i, content in enumerate(pages):
        objects.append(b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
                       b"/Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>" % (5 + 2 * i))
        objects.append(b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream")
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def image_size(rng: random.Random, low: int = 2_000, high: int = 200_000) -> int:
    """Log-uniform between low and high: many small images, a few large."""
    return int(low * (high / low) ** rng.random())


# --------------------------------------------------------------------------
# images

IMAGE_SHARE = 0.80   # of the file's bytes, in base64 image strings
DUPLICATE_RATE = 0.10
RATING_KEYS = ["-3", "0", "1", "2", "5", "10", "42", "100", "2147483647", "2147483648", "007", "x1"]


def db_key(k: str) -> tuple:
    """The Realtime Database's key order: 32-bit integers numerically, then strings."""
    if re.fullmatch(r"-?(0|[1-9][0-9]{0,9})", k) and k != "-0" and -2**31 <= int(k) < 2**31:
        return (0, int(k), "")
    return (1, 0, k)


def images_entries(rng: random.Random, stats: dict) -> Iterator[bytes]:
    titles, details = text_pools(rng, 4096)
    uids = sorted("".join(rng.choices(PUSH_CHARS[1:37] + PUSH_CHARS[38:], k=28)) for _ in range(500))
    recent: dict[str, deque] = {k: deque(maxlen=64) for k in ("jpeg", "png", "thumb", "pdf")}
    makers: dict[str, Callable[[], bytes]] = {
        "jpeg": lambda: jpeg_bytes(rng, image_size(rng)),
        "png": lambda: png_bytes(rng, image_size(rng)),
        "thumb": lambda: png_bytes(rng, image_size(rng, 2_000, 20_000)),
        "pdf": lambda: pdf_bytes(rng, image_size(rng)),
    }

    def image_b64(kind: str) -> str:
        pool = recent[kind]
        if pool and rng.random() < DUPLICATE_RATE:
            stats["duplicates"] += 1
            return rng.choice(pool)
        b64 = base64.b64encode(makers[kind]()).decode("ascii")
        pool.append(b64)
        stats["images"] += 1
        return b64

    r = rng.random
    comment_ids = PushIds(rng)
    total = image_bytes = 0
    for key, ms in PushIds(rng, max_gap_ms=3_600_000):
        text = {"_createdAt": str(ms), "title": titles[int(r() * len(titles))],
                "body": json_str(" ".join(json.loads(details[int(r() * len(details))])
                                          for _ in range(1 + int(r() * 5))))}
        if r() < 0.6:
            t = ms
            comments = []
            for _ in range(1 + int(r() * 5)):
                t += 1 + int(r() * 3_600_000)
                comments.append(f'"{comment_ids.key(t)}":{{"_createdAt":{t},'
                                f'"text":{titles[int(r() * len(titles))]},"uid":"{rng.choice(uids)}"}}')
            text["comments"] = "{" + ",".join(comments) + "}"
        if r() < 0.6:
            likes = sorted(set(rng.choices(uids, k=1 + int(r() * 8))))
            text["likes"] = "{" + ",".join(f'"{u}":true' for u in likes) + "}"
        if r() < 0.2:
            keys = sorted(rng.sample(RATING_KEYS, rng.randint(1, 6)), key=db_key)
            text["ratings"] = "{" + ",".join(f'"{k}":{rng.randint(1, 5)}' for k in keys) + "}"
        text_len = sum(len(k) + len(v) + 4 for k, v in text.items())
        fields = dict(text)
        if image_bytes < IMAGE_SHARE * (total + text_len):
            if r() < 0.85:
                photo = "data:image/jpeg;base64," + image_b64("jpeg")
            else:
                photo = "data:image/png;base64," + image_b64("png")
            fields["photo"] = f'"{photo}"'
            image_bytes += len(photo)
            if r() < 0.3:
                fields["thumbnail"] = f'"{image_b64("thumb")}"'
                image_bytes += len(fields["thumbnail"]) - 2
            if r() < 0.1:
                fields["attachment"] = f'"{image_b64("pdf")}"'
                image_bytes += len(fields["attachment"]) - 2
        entry = ('"%s":{%s}' % (key, ",".join(f'"{k}":{fields[k]}' for k in sorted(fields)))).encode()
        total += len(entry) + 1
        stats["image_bytes"] = image_bytes
        stats["total"] = total
        yield entry


def gen_images(size: int, seed: int, out: str) -> dict:
    rng = random.Random(seed)
    stats = {"images": 0, "duplicates": 0, "image_bytes": 0, "total": 0}
    count, nbytes = write_object_stream(out, '{"articles":{', images_entries(rng, stats), size, "}}")
    # stats include the one record that did not fit; close enough for a share.
    share = stats["image_bytes"] / max(stats["total"], 1)
    return {"records": count, "bytes": nbytes, "images": stats["images"],
            "duplicate_uses": stats["duplicates"], "image_share": round(share, 3)}


# --------------------------------------------------------------------------
# bucket

def gen_bucket(count: int, size: int, seed: int, out: str) -> dict:
    if os.path.isdir(out) and os.listdir(out):
        raise SystemExit(f"gen_dataset: {out} exists and is not empty")
    rng = random.Random(seed)
    r = rng.random
    titles, details = text_pools(rng, 2048)
    mean = size / max(count, 1)
    written = nbytes = images = 0

    def put(rel: str, data: bytes, mtime_ms: int) -> None:
        nonlocal written, nbytes
        path = os.path.join(out, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
        os.utime(path, (mtime_ms / 1000, mtime_ms / 1000))  # stable for archives
        written += 1
        nbytes += len(data)

    ids = PushIds(rng, max_gap_ms=6 * 3_600_000)
    while written < count:
        key, ms = next(ids)
        for k in range(1, 2 + int(r() * 3)):
            if written >= count:
                break
            name_ms = ms + int(r() * 30 * DAY_MS)
            target = int(mean * 1.6 * (0.5 + r()))
            data = jpeg_bytes(rng, target) if r() < 0.7 else png_bytes(rng, target)
            put(f"v1/todolist/{key}/image{k}/{name_ms}", data, name_ms)
            images += 1
            if written >= count:
                break
            target = int(mean * 0.4 * (0.5 + r()))
            history = []
            length = 0
            t = ms
            while length < target:
                t += int(r() * DAY_MS)
                item = (f'    {{\n      "_updatedAt": {t},\n      "detail": {details[int(r() * len(details))]},\n'
                        f'      "title": {titles[int(r() * len(titles))]}\n    }}')
                history.append(item)
                length += len(item.encode()) + 2
            doc = (f'{{\n  "_createdAt": {ms},\n  "history": [\n' + ",\n".join(history)
                   + f'\n  ],\n  "key": "{key}"\n}}\n')
            put(f"v1/todolist/{key}/revisions/{name_ms}.json", doc.encode(), name_ms)
    return {"objects": written, "images": images, "json": written - images, "bytes": nbytes}


# --------------------------------------------------------------------------
# CLI

def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Generate deterministic DumpKit benchmark datasets.",
        epilog="Sizes are decimal (MB = 10^6 bytes); KiB/MiB/GiB are binary.")
    sub = parser.add_subparsers(dest="dataset", required=True)

    def add(name: str, help_text: str, dir_out: bool = False) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.add_argument("--size", type=parse_size, required=True, help="target size, e.g. 5MB, 100MB, 1GB")
        p.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
        p.add_argument("-o", "--output", required=True,
                       help="output directory (must be empty or absent)" if dir_out else "output file")
        return p

    add("todolist", "Salada ToDo export, v1 schema: {\"v1\":{\"todolist\":{pushId: record}}}")
    add("images", "dump where ~80%% of bytes are inline base64 JPEG/PNG/PDF")
    add("bucket", "Storage bucket directory of images and JSON files", dir_out=True).add_argument(
        "--count", type=int, required=True, help="number of objects")
    add("errors", "todolist dump with ~1%% invalid records; pointers go to FILE.expected.json")
    args = parser.parse_args(argv)

    out = args.output
    parent = os.path.dirname(os.path.abspath(out))
    os.makedirs(parent, exist_ok=True)
    start = time.perf_counter()
    if args.dataset == "todolist":
        stats = gen_todolist(args.size, args.seed, out)
    elif args.dataset == "images":
        stats = gen_images(args.size, args.seed, out)
    elif args.dataset == "errors":
        stats = gen_errors(args.size, args.seed, out)
    else:
        stats = gen_bucket(args.count, args.size, args.seed, out)
    elapsed = time.perf_counter() - start
    stats["seconds"] = round(elapsed, 2)
    stats["MB_per_s"] = round(stats["bytes"] / 1e6 / max(elapsed, 1e-9), 1)
    print(f"gen_dataset {args.dataset} -> {out}: {json.dumps(stats, ensure_ascii=False)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
