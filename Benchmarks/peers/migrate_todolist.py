#!/usr/bin/env python3
"""The Python peer for `dumpkit migrate --plan schemas/todolist/plan.yaml --on-error keep`:
the Salada ToDo v1 -> v2 migration as a user would write it with the json module.

Loads the whole dump with json.load, migrates every record under /v1/todolist and moves it
to /v2/todolist, and writes compact UTF-8 JSON with json.dump. Per record, in the plan's order:

- rename _createdAt, _updatedAt, photo_count to createdAt, updatedAt, photoCount, each keeping
  its place among the record's keys (left alone when the new name is taken);
- photoCount from string to integer when the string is an integer written the way the integer
  prints ("0", "12", "-3"); "", "２" (full-width; int() would accept it), "007", "1.0" stay
  strings, as DumpKit keeps values that would not convert back to the same text;
- progress これから着手/着手中/完了 -> todo/doing/done; other values stay;
- image1..image3 collected into images, skipping missing ones, only when the present ones come
  first (image2 without image1 is left as it is, like DumpKit's exact collect) and there is no
  images field yet; images is appended at the end of the record;
- era-1 names (bare strings) in images become {"name": ...}; data: URIs, era-2 objects and
  anything else stay.

/v1 disappears when todolist was all it held (the database has no empty objects); everything
else is left alone. A record already at /v2/todolist/{id} would be overwritten (DumpKit
reports the collision); no rejects file is written.

Usage:
  migrate_todolist.py IN.json -o OUT.json
  migrate_todolist.py IN.json > OUT.json
"""

from __future__ import annotations

import argparse
import json
import re
import sys

RENAMES = {"_createdAt": "createdAt", "_updatedAt": "updatedAt", "photo_count": "photoCount"}
PROGRESS = {"これから着手": "todo", "着手中": "doing", "完了": "done"}
IMAGE_FIELDS = ("image1", "image2", "image3")
# [0-9], not \d (which matches full-width digits), and \Z, not $ (which allows a final newline).
CANONICAL_INTEGER = re.compile(r"(?:0|-?[1-9][0-9]*)\Z")


def file_object(value):
    """An era-1 file name as {name}; data: URIs, era-2 objects and the rest unchanged."""
    if isinstance(value, str) and not value.startswith("data:"):
        return {"name": value}
    return value


def migrate(record):
    if not isinstance(record, dict):
        return record
    if any(old in record and new not in record for old, new in RENAMES.items()):
        record = {(RENAMES[k] if k in RENAMES and RENAMES[k] not in record else k): v
                  for k, v in record.items()}

    count = record.get("photoCount")
    if isinstance(count, str) and CANONICAL_INTEGER.match(count):
        record["photoCount"] = int(count)

    progress = record.get("progress")
    if isinstance(progress, str) and progress in PROGRESS:
        record["progress"] = PROGRESS[progress]

    present = [f in record for f in IMAGE_FIELDS]
    # present fields first: [True, ..., False, ...] is the list sorted in reverse
    if any(present) and "images" not in record and present == sorted(present, reverse=True):
        record["images"] = [record.pop(f) for f in IMAGE_FIELDS if f in record]

    if "images" in record:
        images = record["images"]
        record["images"] = ([file_object(v) for v in images] if isinstance(images, list)
                            else file_object(images))
    return record


def migrate_dump(doc):
    v1 = doc.get("v1") if isinstance(doc, dict) else None
    records = v1.get("todolist") if isinstance(v1, dict) else None
    if not isinstance(records, dict):
        return doc
    del v1["todolist"]
    if not v1:
        del doc["v1"]
    target = doc.setdefault("v2", {}).setdefault("todolist", {})
    for key, record in records.items():
        target[key] = migrate(record)
    return doc


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Migrate a Salada ToDo dump from v1 to v2.")
    parser.add_argument("input", help="JSON dump to read")
    parser.add_argument("-o", "--output", help="file to write (default: standard output)")
    args = parser.parse_args(argv)

    with open(args.input, encoding="utf-8") as f:
        doc = json.load(f)
    doc = migrate_dump(doc)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as f:
            json.dump(doc, f, separators=(",", ":"), ensure_ascii=False)
    else:
        json.dump(doc, sys.stdout, separators=(",", ":"), ensure_ascii=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
