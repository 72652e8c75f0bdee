#!/usr/bin/env python3
"""The peer for `dumpkit import`: what firebase-tools' `database:import` does, in Python.

Loads the whole dump with the standard json module, then for each top-level key cuts its value into
multi-path PATCH bodies of at most 1 MB (a subtree whose compact JSON fits is written whole, a larger
one is cut into its children, recursively), and sends them with `print=silent`, 5 requests in flight
(firebase-tools' defaults), to `http://HOST/PATH.json?ns=NS` (the emulator convention). Like
firebase-tools it needs an empty target: each subtree it writes replaces what is there.

Usage:
  rtdb_import.py DUMP.json --host 127.0.0.1:9000 --ns NAME [--path a/b] [--chunk-size 1000000] [--jobs 5]
"""

from __future__ import annotations

import argparse
import http.client
import json
import sys
import threading
from concurrent.futures import ThreadPoolExecutor


def compact(value) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def pieces(path: str, value, limit: int):
    """(path, compact JSON) pairs that each fit in `limit`, deepest where needed."""
    body = compact(value)
    if len(body) <= limit or not isinstance(value, (dict, list)):
        yield path, body
        return
    items = value.items() if isinstance(value, dict) else enumerate(value)
    for key, child in items:
        if child is None:
            continue
        yield from pieces(f"{path}/{key}" if path else str(key), child, limit)


def chunks(dump: dict, limit: int):
    batch, size = {}, 2
    for key, value in dump.items():
        for path, body in pieces(key, value, limit):
            entry = len(path) + len(body) + 4
            if batch and size + entry > limit:
                yield batch
                batch, size = {}, 2
            batch[path] = body
            size += entry
    if batch:
        yield batch


local = threading.local()


def send(host: str, url: str, batch: dict) -> None:
    if not hasattr(local, "conn"):
        h, p = host.split(":")
        local.conn = http.client.HTTPConnection(h, int(p), timeout=300)
    body = b"{" + b",".join(json.dumps(k).encode() + b":" + v for k, v in batch.items()) + b"}"
    local.conn.request("PATCH", url, body=body, headers={"Content-Type": "application/json"})
    response = local.conn.getresponse()
    response.read()
    if response.status >= 300:
        raise RuntimeError(f"PATCH {url}: HTTP {response.status}")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("dump")
    parser.add_argument("--host", required=True)
    parser.add_argument("--ns", required=True)
    parser.add_argument("--path", default="")
    parser.add_argument("--chunk-size", type=int, default=1_000_000)
    parser.add_argument("--jobs", type=int, default=5)
    args = parser.parse_args()
    with open(args.dump, "rb") as f:
        dump = json.load(f)
    url = f"/{args.path}.json?ns={args.ns}&print=silent"
    count = 0
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for future in [pool.submit(send, args.host, url, batch) for batch in chunks(dump, args.chunk_size)]:
            future.result()
            count += 1
    print(f"{count} chunks", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
