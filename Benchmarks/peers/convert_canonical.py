#!/usr/bin/env python3
"""The peer for `dumpkit convert --canonical`: what a user would write instead.

Loads the whole dump with the standard json module, orders every object's keys
the way the Realtime Database does (keys that are 32-bit integers first, in
numeric order, then the other keys as strings, i.e. by code point, which is
UTF-8 byte order), and writes compact UTF-8 JSON with json.dump.

Usage:
  convert_canonical.py IN.json -o OUT.json
  convert_canonical.py IN.json > OUT.json
"""

from __future__ import annotations

import argparse
import json
import re
import sys

_INT32 = re.compile(r"-?(?:0|[1-9][0-9]{0,9})\Z")


def db_key(key: str) -> tuple:
    """Sort key for the database's child order. "0", "-12" and "2147483647"
    are integers; "007", "-0" and "2147483648" are strings."""
    if _INT32.match(key) and key != "-0":
        n = int(key)
        if -2**31 <= n < 2**31:
            return (0, n, "")
    return (1, 0, key)


def canonical(value):
    """A copy of a JSON value with every object's keys in database order."""
    if isinstance(value, dict):
        return {k: canonical(value[k]) for k in sorted(value, key=db_key)}
    if isinstance(value, list):
        return [canonical(v) for v in value]
    return value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Re-format a Realtime-Database JSON dump as canonical JSON "
                    "(compact, UTF-8, keys in database order).")
    parser.add_argument("input", help="JSON dump to read")
    parser.add_argument("-o", "--output", help="file to write (default: standard output)")
    args = parser.parse_args(argv)

    with open(args.input, encoding="utf-8") as f:
        doc = json.load(f)
    doc = canonical(doc)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as f:
            json.dump(doc, f, separators=(",", ":"), ensure_ascii=False)
    else:
        json.dump(doc, sys.stdout, separators=(",", ":"), ensure_ascii=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
