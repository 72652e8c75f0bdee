#!/usr/bin/env python3
"""The peer for `dumpkit validate IN --schema PATTERN=FILE --format json`: what a user would write
with the `jsonschema` package.

Loads the whole dump with json.load, builds one Draft202012Validator per schema (format is an
annotation, as in DumpKit by default), runs iter_errors over each record the pattern matches and
prints a JSON list of the errors' JSON Pointers (the record's pointer plus the error's path
inside it). Only the schemas are checked, not the database's limits (key characters, depth,
.value beside children) that DumpKit always checks.

Patterns are absolute paths whose segments are keys, `{name}` or `*` (any one key). Patterns use
Python's `re` (jsonschema's default), which differs from ECMA-262 in corners: `$` also matches
before a final newline, `\\d` matches non-ASCII digits.

Usage:
  validate_jsonschema.py IN.json --schema '/v1/todolist/{id}=schemas/todolist/v1.schema.json'

Exit status: 0 when no record has errors, 1 when some do (like dumpkit validate).
"""

from __future__ import annotations

import argparse
import json
import sys

from jsonschema import Draft202012Validator


def escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def records(doc, pattern: str):
    """(pointer, value) of every node the pattern matches, in document order."""
    segments = [s.replace("~1", "/").replace("~0", "~") for s in pattern.strip("/").split("/")]
    nodes = [("", doc)]
    for seg in segments:
        wildcard = seg == "*" or (seg.startswith("{") and seg.endswith("}"))
        nodes = [(ptr + "/" + escape(k), v)
                 for ptr, node in nodes if isinstance(node, dict)
                 for k, v in (node.items() if wildcard else ([(seg, node[seg])] if seg in node else []))]
    return nodes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Validate a dump's records with JSON Schemas (jsonschema).")
    parser.add_argument("input", help="JSON dump to read")
    parser.add_argument("--schema", action="append", required=True, metavar="PATTERN=FILE",
                        help="validate the records PATTERN matches with the schema in FILE (repeatable)")
    args = parser.parse_args(argv)

    validators = []
    for spec in args.schema:
        pattern, sep, path = spec.partition("=")
        if not sep:
            parser.error(f"--schema {spec!r}: expected PATTERN=FILE")
        with open(path, encoding="utf-8") as f:
            schema = json.load(f)
        Draft202012Validator.check_schema(schema)
        validators.append((pattern, Draft202012Validator(schema)))

    with open(args.input, encoding="utf-8") as f:
        doc = json.load(f)

    pointers = []
    for pattern, validator in validators:
        for ptr, record in records(doc, pattern):
            for error in validator.iter_errors(record):
                pointers.append(ptr + "".join("/" + escape(str(p)) for p in error.absolute_path))
    json.dump(pointers, sys.stdout, ensure_ascii=False, indent=0)
    sys.stdout.write("\n")
    return 1 if pointers else 0


if __name__ == "__main__":
    sys.exit(main())
