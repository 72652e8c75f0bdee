#!/usr/bin/env python3
"""The orjson peer for `dumpkit migrate --plan schemas/todolist/plan.yaml --on-error keep`: the
same operations as migrate_todolist.py (imported from it), with the fastest JSON library a Python
user would pick: orjson.loads of the whole file, orjson.dumps of the whole result.

Usage:
  migrate_todolist_orjson.py IN.json -o OUT.json
"""

from __future__ import annotations

import argparse
import os
import sys

import orjson

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from migrate_todolist import migrate_dump  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Migrate a Salada ToDo dump from v1 to v2 with orjson.")
    parser.add_argument("input", help="JSON dump to read")
    parser.add_argument("-o", "--output", required=True, help="file to write")
    args = parser.parse_args(argv)
    with open(args.input, "rb") as f:
        doc = orjson.loads(f.read())
    doc = migrate_dump(doc)
    with open(args.output, "wb") as f:
        f.write(orjson.dumps(doc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
