"""Which records' who-acts (``meaning.action``) two crawls of the same commit differ in, and nothing else.

    python bench/action_changes.py BEFORE/vllm-project/vllm AFTER/vllm-project/vllm

Prints whether the ids are the same, how many records differ besides their action (0 when a change
touched who acts only), the actor moves, then one line per changed action: its new basis, id, actor
before and after, kind, place and message.
"""

from __future__ import annotations

import collections
import gzip
import json
import sys
from pathlib import Path
from typing import Any


def load(data: Path) -> dict[str, dict[str, Any]]:
    with gzip.open(data / "errors.jsonl.gz") as f:
        return {r["id"]: r for r in map(json.loads, f)}


def main(before_dir: str, after_dir: str) -> None:
    before, after = load(Path(before_dir)), load(Path(after_dir))
    print("ids equal", before.keys() == after.keys())
    other = 0
    moves: collections.Counter[tuple[str, str]] = collections.Counter()
    rows = []
    for rid in sorted(before.keys() & after.keys()):
        x, y = before[rid], after[rid]
        ax, ay = x["meaning"].pop("action"), y["meaning"].pop("action")
        other += x != y
        if ax != ay:
            moves[(ax["actor"], ay["actor"])] += 1
            site = y["sites"][0]
            place = f"{site['path']}:{site['line']} {site['qualname']}"
            rows.append((ay["basis"][:60], rid, ax["actor"], ay["actor"], y["kind"], place, (y["message"]["text"] or "")[:70]))
    print("records differing besides action", other)
    print("changed actions", len(rows), dict(sorted(moves.items())))
    for row in sorted(rows):
        print(" | ".join(row).replace("\n", " "))


if __name__ == "__main__":
    main(*sys.argv[1:3])
